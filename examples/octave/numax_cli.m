function numax_cli(instance, solution)
% NUMAX_CLI  Solve one NuMax or NuMax-Class instance file and write its solution file (exit 0), or
% exit with status 3 (SKIP) on any other problem. Plain MATLAB/Octave, nothing to install:
%   octave --no-gui --quiet --path DIR --eval "numax_cli('instance.npz', 'solution.npz')"
%   matlab -batch "addpath('DIR'); numax_cli('instance.npz', 'solution.npz')"
% with DIR the absolute path of this folder (Octave's unzip changes folder: a relative one is lost).
% A point-form instance (points X, labels y) is solved on all its pairwise unit secants.
f = read_npz(instance);
if ~any(strcmp(f.problem, {'numax', 'numax_class'}))
  exit(3);                                        % SKIP: not a NuMax instance
end
if isfield(f, 'X')                                % point form: all pairwise secants
  n = size(f.X, 1);
  [j, i] = find(tril(ones(n), -1));               % every pair i < j
  D = f.X(i, :) - f.X(j, :);
  norms = sqrt(sum(D .^ 2, 2));
  keep = norms > 1e-12 * max(1, max(abs(f.X(:))));  % a duplicate point gives no secant
  D = D(keep, :) ./ repmat(norms(keep), 1, size(D, 2));
  if strcmp(f.problem, 'numax')
    f.secants = D;
  else
    inter = f.y(i(keep)) ~= f.y(j(keep));
    f.inter = D(inter, :); f.intra = D(~inter, :);
  end
end
if strcmp(f.problem, 'numax')                     % NuMax (4): 1 - delta <= v'Pv <= 1 + delta
  V = f.secants;
  lo = (1 - f.delta) * ones(size(V, 1), 1); hi = (1 + f.delta) * ones(size(V, 1), 1);
else                                              % NuMax-Class (7): v'Pv >= 1 - delta (inter),
  V = [f.inter; f.intra];                         % u'Pu <= 1 + delta (intra)
  lo = [(1 - f.delta) * ones(size(f.inter, 1), 1); -Inf(size(f.intra, 1), 1)];
  hi = [Inf(size(f.inter, 1), 1); (1 + f.delta) * ones(size(f.intra, 1), 1)];
end
[P, bound, info] = numax_admm(V, lo, hi);
fprintf('tr P %.8f  bound %.8f  relative gap %.1e  violation %.1e  %d iterations\n', ...
        trace(P), bound, info.gap, info.violation, info.iterations);
if ~info.converged
  fprintf(2, 'not converged: the solution is written, the oracle judges it\n');
end
write_npz(solution, 'P', P);
end

function [P, bound, info] = numax_admm(V, lo, hi)
% NUMAX_ADMM  min tr P  s.t.  lo <= v_i'*P*v_i <= hi,  P PSD  -- NuMax (4), and (7) with one-sided
% bounds (lo = -Inf or hi = Inf), by the ADMM of NuMax Algorithm 1.
%   V (S x N) holds the unit secants v_i as rows. Split P = L and q = A(L), q in the box [lo, hi],
%   with scaled multipliers Lam (N x N) and omega (S x 1), beta1 = beta2 = beta, eta = 1.618:
%     q     <- clip(A(L) - omega, lo, hi)                       truncation (10)
%     P     <- eigenvalues of L + Lam shrunk by 1/beta          shrinkage (11): P is PSD
%     L     <- argmin |P - L - Lam|^2 + |A(L) - q - omega|^2    least squares (12)-(13)
%     Lam   <- Lam - eta (P - L),  omega <- omega - eta (A(L) - q)
%   The least-squares step is solved exactly: L = W + A*(c) with (I + (VV').^2) c = b - A(W),
%   one S x S Cholesky factor for the whole run. beta is balanced against the residuals (Boyd et
%   al. 2011, Sec. 3.4.1) in the first 5000 iterations. The run stops when P violates no bound by
%   more than 1e-7 and the dual bound from y = beta*omega, scaled to dual feasibility
%   (I - sum_i y_i v_i v_i' PSD), is within 1e-7 of tr P (relative): weak duality then says
%   tr P is within that gap of the optimum. BOUND is that lower bound on the optimum.
%
%   C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
%   learning near-isometric linear embeddings", IEEE Trans. Signal Processing 63(22), 2015.
[S, N] = size(V);
A = @(X) sum((V * X) .* V, 2);                    % A(X)_i = v_i' X v_i
At = @(c) V' * (V .* repmat(c, 1, N));            % A*(c) = sum_i c_i v_i v_i'
R = chol(eye(S) + (V * V') .^ 2);                 % I + A A* = R'R
L = zeros(N); Lam = zeros(N); omega = zeros(S, 1); AL = zeros(S, 1);
beta = 1; eta = 1.618; bound = 0; gap = Inf; violation = Inf;
for it = 1:50000
  q = min(max(AL - omega, lo), hi);                                   % (10)
  [U, D] = eig((L + Lam + (L + Lam)') / 2);                           % (11)
  keep = diag(D) > 1 / beta;
  P = U(:, keep) * diag(diag(D(keep, keep)) - 1 / beta) * U(:, keep)';
  W = P - Lam; b = q + omega;                                         % (12)-(13)
  c = R \ (R' \ (b - A(W)));
  L_new = W + At(c); AL_new = b - c;
  Lam = Lam - eta * (P - L_new);
  omega = omega - eta * (AL_new - q);
  if it <= 5000 && mod(it, 10) == 0                                   % residual balancing
    primal = norm([norm(P - L_new, 'fro'), norm(AL_new - q)]);
    dual = beta * norm([norm(L_new - L, 'fro'), norm(AL_new - AL)]);
    factor = 1 + (primal > 10 * dual) - 0.5 * (dual > 10 * primal);
    beta = beta * factor; Lam = Lam / factor; omega = omega / factor;
  end
  L = L_new; AL = AL_new;
  if mod(it, 10) == 0
    AP = A(P);
    violation = max([lo - AP; AP - hi; 0]);
    y = beta * omega;
    y(y > 0 & isinf(lo)) = 0; y(y < 0 & isinf(hi)) = 0;           % no price on an absent bound
    g = sum(lo(y > 0) .* y(y > 0)) + sum(hi(y < 0) .* y(y < 0));   % dual objective
    top = max(eig((At(y) + At(y)') / 2));
    if g > 0 && top > 0
      bound = g / (top * (1 + 1e-12));                            % y / top is dual feasible
    end
    gap = (trace(P) - bound) / max(1, abs(trace(P)));
    if violation <= 1e-7 && gap <= 1e-7
      break
    end
  end
end
P = (P + P') / 2;
info = struct('iterations', it, 'violation', violation, 'gap', gap, 'converged', violation <= 1e-7 && gap <= 1e-7);
end

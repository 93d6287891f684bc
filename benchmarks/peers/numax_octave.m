function numax_octave(code, mexdir, infile, outfile, tight)
% The NuMax authors' code (github.com/image-science-lab/NuMax) on one suite instance, in GNU Octave.
% Called by numax_octave.py, which writes INFILE (mode, delta and secants or data/labels) and reads P
% from OUTFILE. Secant-form NuMax: NuMax.m with demo_numax.m's parameters. Point form: NuMax_CG.m
% (NuMax) or NuMax_CG_Directional.m (NuMax-Class) through numax_wrapper_function.m, the authors'
% wrapper. TIGHT: opt.tol = 1e-8 and ten times the iterations.
pkg load statistics
addpath(genpath(fullfile(code, 'minFunc')));
addpath(fullfile(code, 'functions'));
addpath(mexdir);                       % minFunc's C sources compiled with mkoctfile --mex (first on the path)
rand('seed', 0); randn('seed', 0); rand('state', 0); randn('state', 0);
in = load(infile);
if strcmp(in.mode, 'secants')
  % demo_numax.m's parameters (its 'l-bfgs' branch)
  opt.outer_iterations = 1000;
  opt.linear_solver = 'l-bfgs'; opt.linear_iterations = 10; opt.lbfgs_rank = 5; opt.inner_iterations = 1;
  opt.beta1 = 1; opt.beta2 = 1; opt.eta1 = 1.618; opt.eta2 = 1.618;
  if tight
    opt.tol = 1e-8; opt.outer_iterations = 10000;
  end
  fA = @(x) funA_secants_WY(x, in.secants);
  fAT = @(x) funAT_secants_WY(x, in.secants);
  P = NuMax(fA, fAT, ones(size(in.secants, 2), 1), in.delta, opt);
elseif ~tight
  here = pwd; cd(code);                % the wrapper adds its paths relative to the checkout
  P = numax_wrapper_function(in.data, in.labels(:), in.delta, strcmp(in.mode, 'points_class'));
  cd(here);
else
  % numax_wrapper_function.m's parameters (its 'cgs' branch), tightened
  opt.outermost_iterations = 2000; opt.outer_iterations = 100; opt.tol = 1e-8;
  opt.display = 0; opt.verbose = 1; opt.init_num_secants = 2000; opt.max_cg_secants = 10000;
  opt.num_cg_steps = 1; opt.num_cg_cols = size(in.data, 2);
  opt.linear_solver = 'cgs'; opt.linear_iterations = 10; opt.inner_iterations = 1;
  opt.beta1 = 1; opt.beta2 = 1; opt.eta1 = 1.618; opt.eta2 = 1.618;
  if strcmp(in.mode, 'points_class')
    P = NuMax_CG_Directional(in.data, in.labels(:), in.delta, opt);
  else
    P = NuMax_CG(in.data, in.delta, opt);
  end
end
P = full(P);
save('-v7', outfile, 'P');
end

# A NuMax solver of one's own in Julia: read an instance file, write a solution file.
#
#   julia --project=examples/julia -e 'using Pkg; Pkg.add(["NPZ", "ZipFile", "JuMP", "SCS"])'
#   sdpembed suite run --command "julia --project=$PWD/examples/julia examples/julia/my_numax.jl {instance} {solution}" --problems numax
#
# Handles the `numax` instances that list their secants (NuMax (4), stated in JuMP and solved by
# SCS); exits with code 3 (SKIP) on any other instance. NPZ.jl reads numeric arrays only — the
# instance's `problem` string (numpy's unicode dtype) makes `npzread(instance)` fail —, so only
# `delta` and `secants` are read, and only the `numax` instances of secant form have `secants`.
using NPZ, ZipFile, JuMP, SCS, LinearAlgebra

instance, solution = ARGS
archive = ZipFile.Reader(instance)
members = [file.name for file in archive.files]
close(archive)
"secants.npy" in members || exit(3)                              # SKIP
f = npzread(instance, ["delta", "secants"])
V, δ = f["secants"], f["delta"]

model = Model(optimizer_with_attributes(SCS.Optimizer, "eps_abs" => 1e-9, "eps_rel" => 1e-9))
@variable(model, P[1:size(V, 2), 1:size(V, 2)], PSD)
@constraint(model, [i = 1:size(V, 1)], -δ <= V[i, :]' * P * V[i, :] - 1 <= δ)
@objective(model, Min, tr(P))
optimize!(model)

npzwrite(solution, Dict("P" => Matrix(value.(P))))

// Package sweep runs kubesim experiments and reports them: result tables
// (text and JSON lines) that compare placement policies on the metrics that
// DESIGN.md defines. Tables put the scheduler in the first column and one
// metric per column, with units in the header; JSON lines carry every field
// of sim.Result under stable snake_case keys.
//
// A spec's grid section makes it a sweep (docs/sweep.md): Expand gives its
// grid points, NewPlan their training and evaluation cells, each named by a
// content hash of what determines it (settings, code revision, data
// manifest), and Sweep runs the cells that are not stored yet and writes
// cells.csv, summary.md, spec.yaml and plots. Merge combines the folders of
// a sharded sweep; K8sJob runs the shards as a Kubernetes Indexed Job.
// Compare and Frontier read a finished sweep's cells.csv: the paired
// difference of two schedulers, and the oracle frontier of admission rules
// against each cell's best heuristic (sim.AdmissionOracle).
//
// A file of mode openb (OpenbSpec, RunOpenb) is FGD's experiment on the
// openb GPU traces instead: pod lists x GPU policies x seeds, curves of GPU
// allocation and fragmentation, tables beside the artifact's expected
// results (docs/gpu.md).
package sweep

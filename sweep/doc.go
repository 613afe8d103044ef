// Package sweep runs kubesim experiments and reports them: result tables
// (text and JSON lines) that compare placement policies on the metrics that
// DESIGN.md defines. Tables put the scheduler in the first column and one
// metric per column, with units in the header; JSON lines carry every field
// of sim.Result under stable snake_case keys.
package sweep

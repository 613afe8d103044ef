// Package dataset turns the Alibaba cluster-trace-v2018 into simulator
// workloads: it converts the trace's six CSV tables to Arrow, loads a window
// of a converted trace on K machines as a sim.Workload, and generates a
// synthetic trace in the same CSV schema, calibrated to the real one.
//
// # Pipeline
//
//	Synth (or the real trace) -> table.csv[.gz] / table.tar.gz
//	Convert                    -> table.arrow + manifest.json   (once)
//	Load                       -> *sim.Workload                 (per window)
//
// Convert streams: memory is bounded by the record-batch size, not by the
// input. Each output file is an Arrow IPC stream (read it with an IPC stream
// reader) with typed columns: strings dictionary-encoded per batch, integers
// int64, reals float64, null for empty fields and for the utilisation
// markers -1 and 101. Malformed rows are counted by reason and quoted with
// file and line; in strict mode the first one is an error.
//
// # Units
//
// Trace times are integer seconds from the trace start; workload times are
// sim.Time milliseconds from the start of the loaded window. Trace CPU is in
// hundredths of a core (100 = 1 core = 1000 millicores). Trace memory is
// normalised to [0, 100], 100 being the largest machine, and maps to MiB
// through LoadOptions.MachineMemMiB (384 GiB by default).
//
// # Invariants
//
//   - Load returns workloads that pass sim.Workload.Validate.
//   - Everything random (machine sampling, thinning, replication, jitter,
//     the synthetic trace) comes from the seed: the same inputs and options
//     give the same workload, and Load on Arrow equals LoadCSV on the CSV.
//   - Training, validation and test windows never overlap (Windows.Validate,
//     LoadSplit).
//   - Outputs are written to a temporary name and renamed when complete;
//     the manifest, written last, lists sizes and CRC-32 checksums that
//     Load verifies, so a truncated or corrupt file is an error naming it.
package dataset

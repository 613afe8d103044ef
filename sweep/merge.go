package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kubesim/kubesim/internal/atomicfile"
)

// Merge combines the output folders of a sweep's shards into out: it
// checks that they ran the same plan, copies their cells, spec.yaml and
// plan, and writes cells.csv and summary.md from every shard's cells.
func Merge(dirs []string, out string, summary io.Writer) error {
	if len(dirs) == 0 {
		return fmt.Errorf("merge: no folders")
	}
	var pf *planFile
	var planBytes []byte
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, PlanFile))
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if pf == nil {
			pf, planBytes = &planFile{}, b
			if err := json.Unmarshal(b, pf); err != nil {
				return fmt.Errorf("merge: %s: %w", filepath.Join(d, PlanFile), err)
			}
		} else if string(b) != string(planBytes) {
			return fmt.Errorf("merge: %s and %s ran different plans (another spec or code revision)", filepath.Join(dirs[0], PlanFile), filepath.Join(d, PlanFile))
		}
	}
	if err := os.MkdirAll(filepath.Join(out, cellsDir), 0o755); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	for _, c := range pf.Cells {
		dst := cellPath(out, c.Hash)
		if exists(dst) {
			continue
		}
		for _, d := range dirs {
			if b, err := os.ReadFile(cellPath(d, c.Hash)); err == nil {
				if err := atomicfile.WriteBytes(dst, b); err != nil {
					return fmt.Errorf("merge: %w", err)
				}
				break
			}
		}
	}
	for _, f := range []string{PlanFile, SpecFile} {
		b, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := atomicfile.WriteBytes(filepath.Join(out, f), b); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	return writeTables(out, pf, append([]string{out}, dirs...), summary)
}

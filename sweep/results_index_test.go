package sweep

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestResultsIndex keeps results/ an index of outputs (issue 25): every
// folder has a row in results/README.md with the command that reproduces
// it, every experiment file a row names exists, and no folder holds a
// script (those become kubesim commands or experiment files).
func TestResultsIndex(t *testing.T) {
	root := filepath.Join("..", "results")
	index, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`/]+)/` \\| (.*) \\| (?:`(experiments/[^`]+)`)? \\|$")
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(index), -1) {
		name, cmd, file := m[1], m[2], m[3]
		rows[name] = cmd
		if file != "" {
			if _, err := os.Stat(filepath.Join("..", file)); err != nil {
				t.Errorf("results/README.md: %s names %s: %v", name, file, err)
			}
			if !strings.Contains(cmd, "kubesim ") || !strings.Contains(cmd, file) {
				t.Errorf("results/README.md: %s: the command %q does not run %s", name, cmd, file)
			}
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, ok := rows[e.Name()]; !ok {
			t.Errorf("results/%s/ has no row in results/README.md", e.Name())
		}
		err := filepath.WalkDir(filepath.Join(root, e.Name()), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch filepath.Ext(p) {
			case ".sh", ".py", ".patch", ".go":
				t.Errorf("%s: a script in results/ (make it a kubesim command or an experiment file)", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for name := range rows {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("results/README.md: a row for %s/, which does not exist", name)
		}
	}
}

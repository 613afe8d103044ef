package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Build says which code produced a sweep's results: the git revision, whether
// the tree had changes, the Go version and build tags. Code is the identity
// that cell hashes use: the revision of a clean tree, or the revision and a
// hash of the running executable when the tree had changes (the revision
// alone would not tell two edited builds apart).
type Build struct {
	Revision  string `json:"revision" yaml:"revision"`
	Modified  bool   `json:"modified" yaml:"modified"`
	GoVersion string `json:"go_version" yaml:"go_version"`
	Tags      string `json:"tags" yaml:"tags"`
	Code      string `json:"code" yaml:"code"`
}

var (
	buildOnce sync.Once
	thisBuild Build
)

// CurrentBuild returns the running program's Build: from the binary's
// build information (vcs.revision, vcs.modified, -tags), or, when the
// binary was built without it (go test, go run), from `git rev-parse HEAD`
// and `git status` in the working directory.
func CurrentBuild() Build {
	buildOnce.Do(func() {
		b := Build{GoVersion: runtime.Version(), Revision: "unknown", Modified: true}
		vcs := false
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					b.Revision, vcs = s.Value, true
				case "vcs.modified":
					b.Modified = s.Value == "true"
				case "-tags":
					b.Tags = s.Value
				}
			}
		}
		if !vcs {
			if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
				b.Revision = strings.TrimSpace(string(out))
				st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
				b.Modified = err != nil || len(st) > 0
			}
		}
		b.Code = b.Revision
		if b.Modified {
			b.Code += "+" + executableHash()
		}
		thisBuild = b
	})
	return thisBuild
}

// executableHash is the SHA-256 of the running executable, in hex ("unknown"
// if it cannot be read).
func executableHash() string {
	p, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(p)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))
}

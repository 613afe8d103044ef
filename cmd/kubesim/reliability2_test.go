package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Tests of issue 28 at the command line, one per defect, named after it.

// fullWriter fails every write as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestSummaryToFullDeviceFails (issue 28, defect 12): `convert ... >
// /dev/full` exited 0, the summary's write error ignored. A command whose
// output cannot be written now exits 1, naming the error.
func TestSummaryToFullDeviceFails(t *testing.T) {
	in := t.TempDir()
	os.WriteFile(filepath.Join(in, "machine_meta.csv"), []byte("m_1,0,1,a,96,100,USING\n"), 0o644)
	var stderr strings.Builder
	code := run(context.Background(), []string{"convert", "--in", in, "--out", filepath.Join(t.TempDir(), "out")}, fullWriter{}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "writing the output") || !strings.Contains(stderr.String(), "no space left") {
		t.Errorf("exit %d, %q; want exit 1 naming the write error", code, stderr.String())
	}
	// the same with a real /dev/full, where there is one
	if f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		defer f.Close()
		code := run(context.Background(), []string{"convert", "--in", in, "--out", filepath.Join(t.TempDir(), "out")}, f, io.Discard)
		if code != 1 {
			t.Errorf("convert > /dev/full: exit %d; want 1", code)
		}
	}
}

// TestSamplesThroughSymlinkAndDevice (issue 28, defect 11): --samples on a
// symbolic link replaced the link with a file and left its target as it
// was; --samples /dev/full (as root) replaced the device with a file.
// The link's target now gets the samples, and a device is written
// through: /dev/full fails with its error and stays a device.
func TestSamplesThroughSymlinkAndDevice(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.csv")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.csv")
	os.Symlink(target, link)
	replay := []string{"replay", "--nodes", "4", "--pods", "300", "--scheduler", "first-fit", "--samples"}
	if code, _, stderr := runCLI(t, append(replay, link)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("--samples replaced the link (%v)", err)
	}
	if b, _ := os.ReadFile(target); !strings.HasPrefix(string(b), "scheduler,at_s") {
		t.Errorf("the link's target holds %.40q; want the samples", b)
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		code, _, stderr := runCLI(t, append(replay, "/dev/full")...)
		if code != 1 || !strings.Contains(stderr, "no space left") {
			t.Errorf("--samples /dev/full: exit %d, %q; want 1 and the write error", code, stderr)
		}
		if fi, err := os.Lstat("/dev/full"); err != nil || fi.Mode()&os.ModeDevice == 0 {
			t.Fatalf("/dev/full is not a device any more (%v)", err)
		}
	}
}

// TestServeNegativeFlagsExit2 (issue 28, defect 14): serve --max-body -1
// --workers -3 were accepted (defaults used); the README says impossible
// values exit 2.
func TestServeNegativeFlagsExit2(t *testing.T) {
	for _, tc := range []struct{ flag, value string }{
		{"--max-body", "-1"}, {"--max-body", "0"}, {"--workers", "-3"}, {"--max-nodes", "-1"}, {"--max-nodes", "0"},
	} {
		code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0", tc.flag, tc.value)
		if code != 2 || !strings.Contains(stderr, tc.flag+" "+tc.value) {
			t.Errorf("serve %s %s: exit %d, %q; want 2 naming the flag", tc.flag, tc.value, code, stderr)
		}
	}
}

// TestInterruptedTrainExits130 (issue 28, defect 19): an interrupted train
// exited 0, so `train && eval` went on after a Ctrl-C. It now exits 130
// (ExitInterrupted), after saving last.ckpt and saying how to resume.
func TestInterruptedTrainExits130(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tiny.yaml")
	os.WriteFile(cfg, []byte(tinySpec), 0o644)
	out := filepath.Join(dir, "run")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came before the first update
	var stdout, stderr strings.Builder
	code := run(ctx, []string{"train", "--config", cfg, "--out", out}, &stdout, &stderr)
	if code != ExitInterrupted {
		t.Fatalf("exit %d; want %d\n%s%s", code, ExitInterrupted, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "training interrupted (last.ckpt saved)") || !strings.Contains(stderr.String(), "--resume "+filepath.Join(out, "last.ckpt")) {
		t.Errorf("stdout %q, stderr %q; want the interrupted summary and the --resume hint", stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "last.ckpt")); err != nil {
		t.Errorf("no last.ckpt after the interrupt: %v", err)
	}
}

package dataset

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// Verify checks the converted trace in dir against its manifest: the
// manifest is valid and lists machine_meta, and every table's file has the
// recorded size and CRC-32. It reads every byte once (about 35 MB for the
// default trace); Load checks the batches it reads in the same way.
func Verify(dir string) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if !m.Has(MachineMeta) {
		return fmt.Errorf("%s: %w: the manifest lists no %s table", dir, ErrNotTrace, MachineMeta)
	}
	for _, t := range m.Tables {
		p := filepath.Join(dir, t.File)
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("verifying trace: %w", err)
		}
		h := crc32.New(crcTable)
		n, err := io.Copy(h, f)
		f.Close()
		switch {
		case err != nil:
			return fmt.Errorf("verifying %s: %w", p, err)
		case n != t.Bytes:
			return fmt.Errorf("%s: %d bytes, manifest says %d: truncated or replaced", p, n, t.Bytes)
		case h.Sum32() != t.CRC32:
			return fmt.Errorf("%s: checksum %08x, manifest says %08x: file is corrupt", p, h.Sum32(), t.CRC32)
		}
	}
	return nil
}

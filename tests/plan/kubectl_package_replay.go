// A replay of how kubectl-package makes a package image (packageexport.ToOCI: go-containerregistry's
// crane.Layer, mutate.AppendLayers, mutate.Canonical), with Go's standard library only: the tar
// through archive/tar (and once more through a reader and writer with the zero time, as
// mutate.Time does), gzip at BestSpeed, the config and manifest through encoding/json with
// go-containerregistry's field order. It is not built with kpkg; it is how the golden values of
// tests/plan/test_image.cpp were checked against Go itself (Debian's golang-go, no modules):
//
//	GO111MODULE=off go run tests/plan/kubectl_package_replay.go testdata/packages/greeter
//	GO111MODULE=off go run tests/plan/kubectl_package_replay.go -upstream-test
//
// -upstream-test replays the file map of package-operator's own TestToPushedOCI, whose manifest
// digest that test pins (sha256:8012c104…): the replay gives the same digest.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type Time struct{ time.Time }
type History struct {
	Author     string `json:"author,omitempty"`
	Created    Time   `json:"created,omitempty"`
	CreatedBy  string `json:"created_by,omitempty"`
	Comment    string `json:"comment,omitempty"`
	EmptyLayer bool   `json:"empty_layer,omitempty"`
}
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}
type Config struct {
	Cmd    []string          `json:"Cmd,omitempty"`
	Labels map[string]string `json:"Labels,omitempty"`
}
type ConfigFile struct {
	Architecture  string    `json:"architecture"`
	Author        string    `json:"author,omitempty"`
	Container     string    `json:"container,omitempty"`
	Created       Time      `json:"created,omitempty"`
	DockerVersion string    `json:"docker_version,omitempty"`
	History       []History `json:"history,omitempty"`
	OS            string    `json:"os"`
	RootFS        RootFS    `json:"rootfs"`
	Config        Config    `json:"config"`
	OSVersion     string    `json:"os.version,omitempty"`
	Variant       string    `json:"variant,omitempty"`
	OSFeatures    []string  `json:"os.features,omitempty"`
}
type Descriptor struct {
	MediaType string `json:"mediaType"`
	Size      int64  `json:"size"`
	Digest    string `json:"digest"`
}
type Manifest struct {
	SchemaVersion int64        `json:"schemaVersion"`
	MediaType     string       `json:"mediaType,omitempty"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

func digest(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func craneLayer(filemap map[string][]byte) []byte {
	b := &bytes.Buffer{}
	w := tar.NewWriter(b)
	fn := []string{}
	for f := range filemap {
		fn = append(fn, f)
	}
	sort.Strings(fn)
	for _, f := range fn {
		c := filemap[f]
		if err := w.WriteHeader(&tar.Header{Name: f, Size: int64(len(c))}); err != nil {
			panic(err)
		}
		w.Write(c)
	}
	w.Close()
	return b.Bytes()
}

// mutate.Time's layerTime with the zero time.
func layerTime(in []byte) []byte {
	t := time.Time{}
	w := new(bytes.Buffer)
	tw := tar.NewWriter(w)
	tr := tar.NewReader(bytes.NewReader(in))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		h.ModTime = t
		if h.Format == tar.FormatPAX || h.Format == tar.FormatGNU {
			h.AccessTime = t
			h.ChangeTime = t
		}
		if err := tw.WriteHeader(h); err != nil {
			panic(err)
		}
		if h.Typeflag == tar.TypeReg {
			io.Copy(tw, tr)
		}
	}
	tw.Close()
	return w.Bytes()
}

func main() {
	files := map[string][]byte{}
	labels := map[string]string{}
	if os.Args[1] == "-upstream-test" {
		for k, v := range map[string][]byte{"manifest.yaml": {5, 6}, "manifest.yml": {7, 8}, "subdir/somethingelse": {9, 10}} {
			files[filepath.Join("package", k)] = v
		}
	} else {
		root := os.Args[1]
		src := os.DirFS(root)
		fs.WalkDir(src, ".", func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case e.Name() == ".":
			case strings.HasPrefix(e.Name(), "."):
				if e.IsDir() {
					return filepath.SkipDir
				}
			case e.IsDir(), e.Type()&os.ModeSymlink != 0:
			default:
				d, err := fs.ReadFile(src, p)
				if err != nil {
					return err
				}
				files[filepath.Join("package", p)] = d
			}
			return nil
		})
		for _, kv := range os.Args[2:] {
			i := strings.Index(kv, "=")
			labels[kv[:i]] = kv[i+1:]
		}
	}
	tar1 := craneLayer(files)
	tar2 := layerTime(tar1)
	var gz bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	gw.Write(tar2)
	gw.Close()
	cfg := ConfigFile{Architecture: "amd64", OS: "linux", Created: Time{time.Time{}},
		History: []History{{Created: Time{time.Time{}}}},
		RootFS:  RootFS{Type: "layers", DiffIDs: []string{digest(tar2)}}}
	if len(labels) > 0 {
		cfg.Config.Labels = labels
	}
	cj, _ := json.Marshal(cfg)
	m := Manifest{SchemaVersion: 2, MediaType: "application/vnd.docker.distribution.manifest.v2+json",
		Config: Descriptor{"application/vnd.docker.container.image.v1+json", int64(len(cj)), digest(cj)},
		Layers: []Descriptor{{"application/vnd.docker.image.rootfs.diff.tar.gzip", int64(gz.Len()), digest(gz.Bytes())}}}
	mj, _ := json.Marshal(m)
	fmt.Println("crane tar == re-timed tar:", bytes.Equal(tar1, tar2), "bytes", len(tar2))
	fmt.Println("diff_id", digest(tar2))
	fmt.Println("config", string(cj))
	fmt.Println("config digest", digest(cj))
	fmt.Println("layer digest", digest(gz.Bytes()), "size", gz.Len())
	fmt.Println("manifest digest", digest(mj))
}

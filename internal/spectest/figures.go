package spectest

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"testing"
)

// CheckPNG decodes a figure's PNG and checks it is at least 400×300 and
// has pixels of three colours or more (not blank).
func CheckPNG(t testing.TB, path string, data []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < 400 || b.Dy() < 300 {
		t.Errorf("%s: %v is too small", path, b)
	}
	colours := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < 3 {
		t.Errorf("%s is blank: %d colours", path, len(colours))
	}
}

// CheckSVG parses a figure's SVG as XML and checks it is one drawing with
// at least minPaths paths and 3 texts.
func CheckSVG(t testing.TB, path string, data []byte, minPaths int) {
	t.Helper()
	elements := map[string]int{}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elements[se.Name.Local]++
		}
	}
	if elements["svg"] != 1 || elements["path"] < minPaths || elements["text"] < 3 {
		t.Errorf("%s: elements %v", path, elements)
	}
}

package records

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/idvault/idvault/exit/encryption"
)

// readAll reads every record of rr.
func readAll(t *testing.T, rr recordReader) []*record {
	var recs []*record
	for {
		rec, err := rr.next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		recs = append(recs, rec)
	}
}

// The CSV reader never panics, loses no byte (the records' bytes are the input), numbers
// records in order, and a field replaced by quoteCSV of its own value reads back the same.
func FuzzCSVRecords(f *testing.F) {
	for _, seed := range []string{
		"a,b,c\n1,2,3\n", "a,b\r\n\"x,\"\"y\"\"\nz\",2\r\n", "a,b\n\n1,\"open\n", "a,b\n1,\"q\"x,2\n",
		"\xef\xbb\xbfb,a\n1,2", "b\n\"\"\n\n,\n", "a,b\n1,2,3\n\"", "b,b\nx,y\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := newCSVReader(strings.NewReader(in), []string{"b"})
		if err != nil {
			return
		}
		r.mem = &arena{} // as decrypt-records reads
		_ = r.setKey("a")
		all := bytes.Clone(r.preamble())
		num := 0
		for _, rec := range readAll(t, r) {
			all = append(all, rec.raw...)
			if rec.num != 0 {
				num++
				if rec.num != num {
					t.Fatalf("record %d numbered %d", num, rec.num)
				}
			}
			for _, fl := range rec.fields {
				if fl.start < 0 || fl.end > len(rec.raw) || fl.start > fl.end {
					t.Fatalf("span %d:%d out of a %d-byte record", fl.start, fl.end, len(rec.raw))
				}
				if fl.null {
					continue
				}
				line := append(append(bytes.Clone(rec.raw[:fl.start]), quoteCSV(nil, fl.text)...), rec.raw[fl.end:]...)
				spans, ok := splitCSV(nil, trimEOL(line))
				if !ok {
					t.Fatalf("a quoted value breaks the record %q", line)
				}
				var got []byte
				for _, s := range spans {
					if s.start == fl.start {
						got = csvValue(trimEOL(line), s)
					}
				}
				if !bytes.Equal(got, fl.text) {
					t.Fatalf("value %q reads back as %q", fl.text, got)
				}
			}
		}
		if string(all) != in {
			t.Fatalf("records lose bytes: %q became %q", in, all)
		}
	})
}

// The JSON lines reader never panics, loses no byte, and replacing a string field with
// quoteJSON of its value keeps a valid object whose key holds that value.
func FuzzJSONLRecords(f *testing.F) {
	for _, seed := range []string{
		`{"v":"abc","w":1}` + "\n", `{"v":null}`, `{"v":12}`, `[1]`, `{"v":"a\"b\\u00e9","n":{"v":"x"}}` + "\r\n\n",
		`not json`, `{"\u0076":"k"}`, `{"v":"1","v":"2"}`, " {\t\"v\" : \"x\" } \n",
		"\xef\xbb\xbf{\"v\":\"a\"}\n\xef\xbb\xbf{\"v\":\"b\"}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := newJSONLReader(strings.NewReader(in), []string{"v"})
		r.mem = &arena{} // as decrypt-records reads
		_ = r.setKey("w")
		var all []byte
		for i, rec := range readAll(t, r) {
			all = append(all, rec.raw...)
			for _, fl := range rec.fields {
				if fl.start < 0 || fl.end > len(rec.raw) || fl.start > fl.end {
					t.Fatalf("span %d:%d out of a %d-byte line", fl.start, fl.end, len(rec.raw))
				}
				if fl.null || fl.bad != "" {
					continue
				}
				line := append(append(bytes.Clone(rec.raw[:fl.start]), quoteJSON(nil, fl.text)...), rec.raw[fl.end:]...)
				if i == 0 {
					line = bytes.TrimPrefix(line, utf8BOM) // the BOM before the first line
				}
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(line, &obj); err != nil {
					t.Fatalf("replacing %q breaks the line %q: %v", fl.text, line, err)
				}
			}
		}
		if string(all) != in {
			t.Fatalf("records lose bytes: %q became %q", in, all)
		}
	})
}

// Whatever was written before it, in whatever writes, the stop line leaves it unchanged and
// makes encoding/csv fail by the end, and its own line is not JSON.
func FuzzStopLine(f *testing.F) {
	for _, seed := range []string{"", "a,b\n1,2\n", "a,b\n1,2", "a\n\"open", "a\n\"x\"\"\n", `{"v":"x"}`} {
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, before string, cut uint8) {
		for _, format := range []string{FormatCSV, FormatJSONL} {
			var out bytes.Buffer
			sw := NewStopWriter(&out, format)
			k := min(int(cut), len(before))
			_, _ = sw.Write([]byte(before[:k]))
			_, _ = sw.Write([]byte(before[k:]))
			if err := sw.Stop("fuzz"); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out.String(), before) {
				t.Fatalf("%q changed", before)
			}
			if format == FormatCSV {
				if _, err := csv.NewReader(&out).ReadAll(); err == nil {
					t.Fatalf("a CSV reader reads %q and its stop line", before)
				}
				continue
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if json.Valid([]byte(lines[len(lines)-1])) {
				t.Fatalf("the stop line after %q is JSON", before)
			}
		}
	})
}

// Every text form of a ciphertext decodes back to its bytes; anything else never panics.
func FuzzDecodeCiphertext(f *testing.F) {
	for _, seed := range [][]byte{{}, {0}, {9, 1, 2, 3, 250}, []byte("a longer ciphertext-like value ~~~??")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			got, err := DecodeCiphertext(EncodingBase64, []byte(enc.EncodeToString(b)))
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("base64 %q: %v %x", enc.EncodeToString(b), err, got)
			}
		}
		for _, h := range []string{hex.EncodeToString(b), `\x` + strings.ToUpper(hex.EncodeToString(b))} {
			got, err := DecodeCiphertext(EncodingHex, []byte(h))
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("hex %q: %v", h, err)
			}
		}
		_, _ = DecodeCiphertext(EncodingBase64, b)
		_, _ = DecodeCiphertext(EncodingHex, b)
	})
}

// CiphertextHeader gives ExtractResourceID what the whole ciphertext gives it, from every
// text form, whatever the ciphertext's length.
func FuzzCiphertextHeader(f *testing.F) {
	for _, seed := range [][]byte{{2}, {9, 1}, bytes.Repeat([]byte{10, 7}, 150), append([]byte{3}, bytes.Repeat([]byte{0xfe}, 400)...), append([]byte{11}, make([]byte, 200)...)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ct []byte) {
		wantV, wantRID, wantErr := encryption.ExtractResourceID(ct)
		forms := map[string]string{
			"std": base64.StdEncoding.EncodeToString(ct), "url": base64.RawURLEncoding.EncodeToString(ct),
		}
		for name, text := range forms {
			head, err := CiphertextHeader(EncodingBase64, []byte(text))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			v, rid, err := encryption.ExtractResourceID(head)
			if v != wantV || rid != wantRID || (err == nil) != (wantErr == nil) {
				t.Fatalf("%s of %d bytes: %v %v %v, want %v %v %v", name, len(ct), v, rid, err, wantV, wantRID, wantErr)
			}
		}
		head, err := CiphertextHeader(EncodingHex, []byte(hex.EncodeToString(ct)))
		if err != nil {
			t.Fatal(err)
		}
		if v, rid, _ := encryption.ExtractResourceID(head); v != wantV || rid != wantRID {
			t.Fatalf("hex of %d bytes", len(ct))
		}
		_, _ = CiphertextHeader(EncodingBase64, ct)
		_, _ = CiphertextHeader(EncodingHex, ct)
	})
}

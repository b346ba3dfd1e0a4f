package exitclient

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"
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
				spans, ok := splitCSV(trimEOL(line))
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
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := newJSONLReader(strings.NewReader(in), []string{"v"})
		var all []byte
		for _, rec := range readAll(t, r) {
			all = append(all, rec.raw...)
			for _, fl := range rec.fields {
				if fl.start < 0 || fl.end > len(rec.raw) || fl.start > fl.end {
					t.Fatalf("span %d:%d out of a %d-byte line", fl.start, fl.end, len(rec.raw))
				}
				if fl.null || fl.bad != "" {
					continue
				}
				line := append(append(bytes.Clone(rec.raw[:fl.start]), quoteJSON(nil, fl.text)...), rec.raw[fl.end:]...)
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

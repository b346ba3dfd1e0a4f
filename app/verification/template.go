package verification

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Placeholder is the text replaced by the code in the subject, html and text of a mail.
const Placeholder = "SERVICE_VERIFICATION_CODE"

// template holds the placeholder names (Placeholder and the configured aliases).
type template struct {
	names []string // longest first, so that no name is replaced inside a longer one
}

func newTemplate(aliases []string) template {
	names := []string{Placeholder}
	for _, a := range aliases {
		if a != Placeholder && !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	return template{names: names}
}

// has reports whether s contains a placeholder.
func (t template) has(s string) bool {
	for _, n := range t.names {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// fill replaces every placeholder in s by code.
func (t template) fill(s, code string) string {
	pairs := make([]string, 0, 2*len(t.names))
	for _, n := range t.names {
		pairs = append(pairs, n, code)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// voidElements have no end tag.
var voidElements = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Br: true, atom.Col: true, atom.Embed: true, atom.Hr: true,
	atom.Img: true, atom.Input: true, atom.Link: true, atom.Meta: true, atom.Source: true,
	atom.Track: true, atom.Wbr: true, atom.Param: true, atom.Keygen: true,
}

// optionalEnd elements may be left open: their end is implied by the next element or by their
// parent's end (HTML's optional end tags).
var optionalEnd = map[atom.Atom]bool{
	atom.Html: true, atom.Head: true, atom.Body: true, atom.P: true, atom.Li: true, atom.Dt: true,
	atom.Dd: true, atom.Option: true, atom.Optgroup: true, atom.Tr: true, atom.Td: true,
	atom.Th: true, atom.Thead: true, atom.Tbody: true, atom.Tfoot: true, atom.Colgroup: true,
	atom.Caption: true, atom.Rb: true, atom.Rt: true, atom.Rp: true, atom.Rtc: true,
}

// rawText elements hold text that is not markup (a '<' is allowed in them).
var rawText = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Textarea: true, atom.Title: true, atom.Xmp: true,
	atom.Noscript: true, atom.Iframe: true, atom.Noembed: true, atom.Noframes: true, atom.Plaintext: true,
}

// checkHTML accepts what mail clients render as the author meant; the rule is in doc.go. The
// error names the problem and at most a tag name, never the content.
func checkHTML(s string) error {
	z := html.NewTokenizer(strings.NewReader(s))
	var stack []openElement
	consumed := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if !errors.Is(z.Err(), io.EOF) {
				return fmt.Errorf("html: %w", z.Err())
			}
			break
		}
		raw := string(z.Raw()) // before Token, which may unescape in place
		consumed += len(raw)
		tok := z.Token()
		switch tt {
		case html.TextToken:
			inRaw := len(stack) > 0 && rawText[stack[len(stack)-1].a]
			if !inRaw && strings.Contains(raw, "<") {
				return errors.New("html: a bare '<' in text (write &lt;)")
			}
		case html.CommentToken:
			if !strings.HasPrefix(raw, "<!--") || !strings.HasSuffix(raw, "-->") || len(raw) < 7 {
				return errors.New("html: malformed or unterminated comment")
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if tok.DataAtom == 0 && !strings.ContainsAny(tok.Data, "-:") {
				return fmt.Errorf("html: unknown element <%s>", short(tok.Data))
			}
			if tt == html.StartTagToken && !voidElements[tok.DataAtom] {
				stack = append(stack, openElement{tok.Data, tok.DataAtom})
			}
		case html.EndTagToken:
			var err error
			if stack, err = closeElement(stack, tok); err != nil {
				return err
			}
		}
	}
	if consumed != len(s) {
		return errors.New("html: markup cut off at the end (an unclosed tag or quote)")
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if !optionalEnd[stack[i].a] {
			return fmt.Errorf("html: <%s> is never closed", short(stack[i].name))
		}
	}
	return nil
}

// openElement is an element checkHTML has met the start tag of and not yet the end tag.
type openElement struct {
	name string
	a    atom.Atom
}

// closeElement is stack once the end tag tok has closed its element, and the elements opened
// inside it that may be left open; an error when tok closes a void element, an element whose
// end tag is required is still open inside it, or nothing on stack matches it.
func closeElement(stack []openElement, tok html.Token) ([]openElement, error) {
	if voidElements[tok.DataAtom] {
		return stack, fmt.Errorf("html: end tag for the void element <%s>", short(tok.Data))
	}
	i := len(stack) - 1
	for ; i >= 0 && stack[i].name != tok.Data; i-- {
		if !optionalEnd[stack[i].a] {
			return stack, fmt.Errorf("html: </%s> closes <%s>, which is still open", short(tok.Data), short(stack[i].name))
		}
	}
	if i < 0 {
		return stack, fmt.Errorf("html: </%s> without a matching start tag", short(tok.Data))
	}
	return stack[:i], nil
}

// short bounds a tag name quoted in an error.
func short(name string) string {
	if len(name) > 32 {
		return name[:32] + "..."
	}
	return name
}

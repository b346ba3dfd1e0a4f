package verification

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckHTML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		html string
		ok   bool
	}{
		{"fragment", `<p>Code: <b>X</b></p>`, true},
		{"document", `<!DOCTYPE html><html><head><meta charset="utf-8"><title>a < b</title><style>p > b {}</style></head><body><p>X</p></body></html>`, true},
		{"optional end tags", `<ul><li>one<li>two</ul><p>a<p>b<table><tr><td>1<td>2</table>`, true},
		{"void and self-closing", `<p>X<br><img src="a.png" alt=""><br/><hr /></p>`, true},
		{"entities and comments", `<p>&lt;X&gt; &amp; &nbsp;<!-- note --></p>`, true},
		{"outlook conditional comment", `<!--[if mso]><table><tr><td><![endif]--><p>X</p>`, true},
		{"namespaced and custom elements", `<o:p>X</o:p><my-widget>x</my-widget>`, true},
		{"script with <", `<script>if (a<b) {}</script><p>X</p>`, true},
		{"plain text", `just X`, true},

		{"unclosed element", `<div><b>X</b>`, false},
		{"misnested", `<div><b>X</div></b>`, false},
		{"stray end tag", `<p>X</p></div>`, false},
		{"bare <", `<p>a < b X</p>`, false},
		{"< garbage", `<<p>X</p>`, false},
		{"tag cut off at the end", `<p>X</p><b`, false},
		{"unclosed quote", `<a href="x>X</a>`, false},
		{"unterminated comment", `<p>X</p><!-- note`, false},
		{"bogus comment", `<p>X</p><?php echo 1 ?>`, false},
		{"unknown element", `<blink2>X</blink2>`, false},
		{"end tag of a void element", `<p>X</br></p>`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkHTML(tc.html)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				require.NotContains(t, err.Error(), "X", "errors do not quote the content")
			}
		})
	}
}

func TestTemplateFill(t *testing.T) {
	t.Parallel()
	tm := newTemplate([]string{"TANKER_VERIFICATION_CODE", "CODE_", Placeholder})
	require.Equal(t, []string{Placeholder, "TANKER_VERIFICATION_CODE", "CODE_"}, tm.names, "longest first, no duplicate")
	require.True(t, tm.has("x TANKER_VERIFICATION_CODE"))
	require.False(t, tm.has("SERVICE_VERIFICATION"))
	require.Equal(t, "a 12 b 12 c 12 d 12",
		tm.fill("a SERVICE_VERIFICATION_CODE b TANKER_VERIFICATION_CODE c CODE_ d SERVICE_VERIFICATION_CODE", "12"))
}

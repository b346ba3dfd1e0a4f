package console

import (
	"bytes"
	"fmt"
	"html/template"
	"time"

	"github.com/gofiber/fiber/v2"
)

// page is what every template receives.
type page struct {
	Title    string
	SignedIn bool
	CSRF     string
	Flash    string
	Error    string
	Code     string
	Version  string
	Data     any
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"size": func(n int64) string {
		switch {
		case n < 1<<10:
			return fmt.Sprintf("%d B", n)
		case n < 1<<20:
			return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
		case n < 1<<30:
			return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
		}
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	},
	"yesno": func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	},
}

// parsePages parses each page with the layout (each page defines "content").
func parsePages() map[string]*template.Template {
	pages := map[string]*template.Template{}
	for _, name := range []string{"login", "apps", "app", "secret", "delete", "server", "api", "error"} {
		pages[name] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

// render writes a page. A signed-in request gets the navigation and the CSRF token.
func (h *Handler) render(c *fiber.Ctx, status int, name string, p page) error {
	if sess := sessionOf(c); sess != nil {
		p.SignedIn, p.CSRF = true, sess.csrf
	}
	p.Version = h.d.Version
	var buf bytes.Buffer
	if err := h.pages[name].Execute(&buf, p); err != nil {
		return fmt.Errorf("console: render %s: %w", name, err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(buf.Bytes())
}

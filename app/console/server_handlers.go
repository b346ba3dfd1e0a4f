package console

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/openapi"
)

type check struct {
	Name, Result string
	OK           bool
}

type serverData struct {
	Interfaces []Interface
	Ready      bool
	Checks     []check
	Warnings   []string
	Version    string
	DataFile   string
	DataSize   int64
	SizeErr    string
	Now        time.Time
}

func (h *Handler) serverPage(c *fiber.Ctx) error {
	results, ready := h.d.Ready(c.UserContext())
	d := serverData{Interfaces: h.d.Interfaces, Ready: ready, Warnings: h.d.Warnings, Version: h.d.Version, DataFile: h.d.DataFile, Now: time.Now()}
	for name, r := range results {
		d.Checks = append(d.Checks, check{Name: name, Result: r, OK: r == "ok"})
	}
	sort.Slice(d.Checks, func(i, j int) bool { return d.Checks[i].Name < d.Checks[j].Name })
	if st, err := os.Stat(h.d.DataFile); err == nil {
		d.DataSize = st.Size()
	} else {
		d.SizeErr = "cannot read its size"
	}
	return h.render(c, fiber.StatusOK, "server", page{Title: "Server", Data: d})
}

// backup streams a hot backup of the data file: the admin API's own GET /admin/backup handler
// (a verified snapshot, streamed with its length), behind the console's session.
func (h *Handler) backup(c *fiber.Ctx) error {
	return h.d.Admin.Backup(c)
}

// apiOperation is one operation of the OpenAPI document, for the readable API page.
type apiOperation struct {
	Method, Path, Summary, Description string
	Statuses                           []string
}

type apiTag struct {
	Name, Description string
	Operations        []apiOperation
}

func (h *Handler) apiPage(c *fiber.Ctx) error {
	var doc struct {
		Info  struct{ Title, Version string }      `json:"info"`
		Tags  []struct{ Name, Description string } `json:"tags"`
		Paths map[string]map[string]struct {
			Tags        []string                   `json:"tags"`
			Summary     string                     `json:"summary"`
			Description string                     `json:"description"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.JSON, &doc); err != nil {
		return h.fail(c, err)
	}
	var tags []apiTag
	for _, t := range doc.Tags {
		tags = append(tags, apiTag{Name: t.Name, Description: t.Description})
	}
	for path, item := range doc.Paths {
		for method, op := range item {
			o := apiOperation{Method: strings.ToUpper(method), Path: path, Summary: op.Summary, Description: op.Description}
			for st := range op.Responses {
				o.Statuses = append(o.Statuses, st)
			}
			slices.Sort(o.Statuses)
			for i := range tags {
				if len(op.Tags) > 0 && tags[i].Name == op.Tags[0] {
					tags[i].Operations = append(tags[i].Operations, o)
				}
			}
		}
	}
	for i := range tags {
		slices.SortFunc(tags[i].Operations, func(a, b apiOperation) int {
			return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method)
		})
	}
	return h.render(c, fiber.StatusOK, "api", page{Title: "API", Data: tags})
}

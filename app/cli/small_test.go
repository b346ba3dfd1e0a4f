package cli_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
)

// The text output of app show carries the URL ID the curl examples need.
func TestAppShowTextShowsURLID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	out, _, code := clitest.Run(t, dir, "app", "create", "--name", "u", "--json")
	require.Equal(t, 0, code)
	var c struct {
		App struct {
			ID    string `json:"id"`
			URLID string `json:"url_id"`
		} `json:"app"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	require.NotEmpty(t, c.App.URLID)
	out, _, code = clitest.Run(t, dir, "app", "show", c.App.ID)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^URL ID: +`+regexp.QuoteMeta(c.App.URLID)+`$`, out)
}

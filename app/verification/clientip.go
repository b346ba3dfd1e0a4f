package verification

import (
	"fmt"

	"github.com/idvault/idvault/app/clientip"
)

// proxies are the trusted proxies (config server.trusted_proxies); the per-IP send limit
// counts by proxies.Of(c), the client address every per-client limit of idvault uses.
type proxies = clientip.Proxies

func parseProxies(list []string) (proxies, error) {
	ps, err := clientip.Parse(list)
	if err != nil {
		return nil, fmt.Errorf("verification: %w", err)
	}
	return ps, nil
}

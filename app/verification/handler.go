package verification

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/jsonkeys"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/store"
)

// KeepCodes is how many of an address's newest codes stay valid at once.
const KeepCodes = 3

// Apps finds apps (apps.Registry).
type Apps interface {
	Get(id []byte) (apps.App, error)
}

// Store is what the verification API needs from the store.
type Store interface {
	Record(appID []byte, email string) (store.Record, error)
	IssueCode(in store.Issue) (store.Code, error)
	TestCode(in store.Issue) (store.Code, bool, error)
	WithdrawSend(appID []byte, email string, id uint64, lim store.SendLimits) error
	UseCode(appID []byte, email string, mac []byte, att store.AttemptLimits) error
	SweepCodes(limit int) (int, error)
	SweepThrottle(limit int) (int, error)
}

// Mailer sends one mail (mail.Sender).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// Deps are what New needs.
type Deps struct {
	Apps   Apps
	Store  Store
	Mailer Mailer
	Config config.Verification
	// TrustedProxies is server.trusted_proxies: only these may set X-Forwarded-For.
	TrustedProxies []string
	// CodeKey is the HMAC key of codes (the master key's "verification code hmac" derivation).
	CodeKey []byte
	// Metrics registers the metrics (nil: not registered).
	Metrics prometheus.Registerer
	Logger  *slog.Logger
}

// Handler serves /verification/email, /verification/email/code and /verification/email/verify.
type Handler struct {
	apps     Apps
	store    Store
	mailer   Mailer
	cfg      config.Verification
	proxies  proxies
	key      []byte
	tmpl     template
	metrics  *metrics
	log      *slog.Logger
	attempts store.AttemptLimits
}

// New builds the handler.
func New(d Deps) (*Handler, error) {
	if d.Apps == nil || d.Store == nil || d.Mailer == nil {
		return nil, errors.New("verification: apps, store and mailer are required")
	}
	if len(d.CodeKey) < 32 {
		return nil, errors.New("verification: the code key must be at least 32 bytes")
	}
	if errs := d.Config.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("verification: invalid config: %w", errors.Join(errs...))
	}
	ps, err := parseProxies(d.TrustedProxies)
	if err != nil {
		return nil, err
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{
		apps: d.Apps, store: d.Store, mailer: d.Mailer, cfg: d.Config, proxies: ps,
		key: append([]byte(nil), d.CodeKey...), tmpl: newTemplate(d.Config.Placeholders),
		metrics: newMetrics(d.Metrics), log: log.With("component", "verification"),
		attempts: store.AttemptLimits{MaxWrong: d.Config.MaxWrongAttempts, Lock: d.Config.LockDuration},
	}, nil
}

// credentials are the fields every route carries.
type credentials struct {
	AppID     *string `json:"app_id"`
	AuthToken *string `json:"auth_token"`
}

// decode parses the JSON body into v. A syntax error fails at once; a field of the wrong type is
// returned as typeErr (the rest of v is filled) so the caller can find the app, and so its error
// style, first.
func decode(c *fiber.Ctx, v any) (typeErr, err *apierr.Error) {
	e := json.Unmarshal(c.Body(), v)
	var te *json.UnmarshalTypeError
	if e == nil || errors.As(e, &te) && te.Field != "" { // an object: which key came twice?
		if key, twice := repeatedField(c.Body(), v); twice {
			return apierr.InvalidBody.Msg("%s is given twice", key), nil
		}
	}
	switch {
	case e == nil:
		return nil, nil
	case errors.As(e, &te) && te.Field != "":
		return apierr.InvalidBody.Msg("%s must be a %s", requestField(te.Field), jsonType(te.Type.Kind().String())), nil
	case errors.As(e, &te):
		return nil, apierr.InvalidBody.Msg("the body must be a JSON object")
	default:
		return nil, apierr.InvalidBody.Msg("the body is not valid JSON")
	}
}

// The keys each body reads, as the request names them; encoding/json matches them in any case.
var (
	codeKeys      = []string{"app_id", "auth_token", "email"}
	verifyKeys    = []string{"app_id", "auth_token", "email", "verification_code"}
	sendKeys      = []string{"app_id", "auth_token", "email_data"}
	emailDataKeys = []string{"subject", "to_email", "html", "text", "from_name", "to_name", "reply_to_email", "reply_to_name"}
)

// repeatedField finds a field of v's body given twice (in any case), of which encoding/json
// would keep the last value silently ({"email": "a@x.io", "Email": "victim@x.io"}), at the top
// or in email_data. Unknown keys are ignored, even repeated: clients may send more than idvault reads.
func repeatedField(body []byte, v any) (string, bool) {
	switch v.(type) {
	case *codeRequest:
		return jsonkeys.RepeatedOf(body, true, codeKeys...)
	case *verifyRequest:
		return jsonkeys.RepeatedOf(body, true, verifyKeys...)
	case *sendRequest:
		if key, twice := jsonkeys.RepeatedOf(body, true, sendKeys...); twice {
			return key, true
		}
		var top struct {
			EmailData json.RawMessage `json:"email_data"`
		}
		if json.Unmarshal(body, &top) == nil {
			if key, twice := jsonkeys.RepeatedOf(top.EmailData, true, emailDataKeys...); twice {
				return "email_data." + key, true
			}
		}
	}
	return "", false
}

// requestField is the field as the request names it: encoding/json prefixes the fields of an
// embedded struct with the Go struct's name ("credentials.app_id"), which no client wrote.
func requestField(field string) string {
	return strings.TrimPrefix(field, "credentials.")
}

func jsonType(kind string) string {
	switch kind {
	case "struct", "map":
		return "JSON object"
	case "string":
		return "string"
	}
	return kind
}

// lookupApp finds the app named by creds, without checking the token (the send route needs the
// app's error style before it reports anything else). It returns nil when app_id is missing,
// malformed or unknown.
func (h *Handler) lookupApp(creds credentials) (*apps.App, error) {
	if creds.AppID == nil {
		return nil, nil
	}
	id, err := apps.ParseID(*creds.AppID)
	if err != nil {
		return nil, nil
	}
	a, err := h.apps.Get(id)
	if errors.Is(err, apps.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// authenticate checks creds: app_id and auth_token present, the app exists, the token is its
// own (constant-time comparison).
func (h *Handler) authenticate(creds credentials, app *apps.App) *apierr.Error {
	switch {
	case creds.AppID == nil:
		return apierr.InvalidBody.Msg("app_id is required")
	case creds.AuthToken == nil:
		return apierr.InvalidBody.Msg("auth_token is required")
	}
	if _, err := apps.ParseID(*creds.AppID); err != nil {
		return apierr.InvalidBody.Msg("app_id is not the base64 of a 32-byte app ID")
	}
	if app == nil {
		return apierr.AppNotFound.New()
	}
	if !apps.CheckToken(*app, *creds.AuthToken) {
		return apierr.InvalidAuthToken.New()
	}
	return nil
}

// resolve decodes the body into v (whose credentials are creds), and authenticates the app.
// onApp, when set, runs as soon as the app is known (before any error is reported).
func (h *Handler) resolve(c *fiber.Ctx, v any, creds *credentials, onApp func(*apps.App)) (*apps.App, error) {
	typeErr, err := decode(c, v)
	if err != nil {
		return nil, err
	}
	app, lerr := h.lookupApp(*creds)
	if lerr != nil {
		return nil, apierr.Internal(lerr)
	}
	if app != nil && onApp != nil {
		onApp(app)
	}
	if typeErr != nil {
		return nil, typeErr
	}
	if err := h.authenticate(*creds, app); err != nil {
		return nil, err
	}
	return app, nil
}

// Sweep deletes the codes and throttle counters that no longer matter.
func (h *Handler) Sweep() error {
	codes, err := h.store.SweepCodes(1000)
	if err != nil {
		return err
	}
	counters, err := h.store.SweepThrottle(1000)
	if err != nil {
		return err
	}
	if codes+counters > 0 {
		h.log.Debug("swept", "codes", codes, "counters", counters)
	}
	return nil
}

// RunSweeper calls Sweep every interval until ctx ends.
func (h *Handler) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := h.Sweep(); err != nil {
				h.log.Error("sweep failed", "err", err)
			}
		}
	}
}

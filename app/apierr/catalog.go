package apierr

import "net/http"

// The catalogue. Codes shared by several interfaces are listed once. Names are the wire codes.
var (
	// Every interface.
	InvalidBody       = Code{http.StatusBadRequest, "invalid_body", "the request body is not valid"}
	NotFound          = Code{http.StatusNotFound, "not_found", "no such route"}
	MethodNotAllowed  = Code{http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed on this route"}
	BodyTooLarge      = Code{http.StatusRequestEntityTooLarge, "body_too_large", "the request body is too large"}
	HeaderTooLarge    = Code{http.StatusRequestHeaderFieldsTooLarge, "request_header_too_large", "the request line and headers are too large"}
	InternalError     = Code{http.StatusInternalServerError, "internal_error", "internal error; a retry may help"}
	FeatureNotEnabled = Code{http.StatusNotFound, "feature_not_enabled", "this feature is not enabled on this server"}
	HostNotAllowed    = Code{http.StatusMisdirectedRequest, "host_not_allowed", "this server does not answer for that Host header (server.allowed_hosts)"}
	// ExitHostNotAllowed is host_not_allowed as the exit server answers it, naming its own key.
	ExitHostNotAllowed = Code{http.StatusMisdirectedRequest, "host_not_allowed", "this server does not answer for that Host header (exit.allowed_hosts)"}
	// MetricsHostNotAllowed is host_not_allowed as the separate metrics listener (metrics.listen)
	// answers it, naming its own key; the code is HostNotAllowed's.
	MetricsHostNotAllowed = Code{http.StatusMisdirectedRequest, "host_not_allowed", "this server does not answer for that Host header (metrics.allowed_hosts)"}
	// MalformedRequest: framing that a proxy could read differently (two Host headers,
	// Content-Length with Transfer-Encoding); the connection is closed after the answer.
	MalformedRequest = Code{http.StatusBadRequest, "malformed_request", "the request's framing is ambiguous (two Host headers, or Content-Length with Transfer-Encoding)"}

	// Apps (fake authentication, verification, admin).
	InvalidAppID = Code{http.StatusBadRequest, "invalid_app_id", "the app ID is not the base64 of 32 bytes"}
	AppNotFound  = Code{http.StatusNotFound, "app_not_found", "no app with that ID"}
	AppIsNotTest = Code{http.StatusForbidden, "app_is_not_test", "this app is not in test mode"}
	AppNoSecret  = Code{http.StatusForbidden, "app_secret_unknown", "idvault does not hold this app's secret"}

	// Identities (fake authentication, identity server).
	InvalidEmail  = Code{http.StatusBadRequest, "invalid_email", "invalid email address"}
	TooManyEmails = Code{http.StatusBadRequest, "too_many_emails", "too many emails in one request"}
	UserNotFound  = Code{http.StatusNotFound, "user_not_found", "no identity for that email"}

	// Identity server ({"error": message, "code": name} bodies; the message is the wire text
	// of the reference's clients, the name the code a program reads).
	NoEmailProvided = Code{http.StatusBadRequest, "no_email_provided", "no email provided"}
	InvalidEmailIS  = Code{http.StatusBadRequest, "invalid_email", "invalid email"}
	UnknownUser     = Code{http.StatusBadRequest, "unknown_user", "unknown user"}
	// UnsupportedMediaType: a tokenless identity server accepts only application/json bodies.
	UnsupportedMediaType = Code{http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json"}
	Unauthorized         = Code{http.StatusUnauthorized, "unauthorized", "unauthorized"}
	// ISAppUnavailable: identity_server.app_id names no app idvault holds (a configuration
	// problem, so 503 and /readyz fails, rather than a client error).
	ISAppUnavailable = Code{http.StatusServiceUnavailable, "identity_server_app_unavailable", "identity server unavailable: the app of identity_server.app_id does not exist on this idvault"}
	// ID tokens (identity_server.oidc). InvalidToken answers with WWW-Authenticate: Bearer
	// error="invalid_token"; its message says what was wrong (expired, audience, issuer,
	// signature, malformed).
	InvalidToken     = Code{http.StatusUnauthorized, "invalid_token", "invalid ID token"}
	Forbidden        = Code{http.StatusForbidden, "forbidden", "forbidden: the ID token is for another email"}
	EmailNotVerified = Code{http.StatusForbidden, "email_not_verified", "the ID token's email is not verified (email_verified is not true)"}
	NoEmailClaim     = Code{http.StatusForbidden, "no_email_claim", "the ID token has no usable email claim"}
	// IdentityProviderUnavailable: the OpenID provider's discovery document or keys cannot be
	// fetched while they are needed; Retry-After says when idvault asks the provider again. The
	// app token keeps working.
	IdentityProviderUnavailable = Code{http.StatusServiceUnavailable, "identity_provider_unavailable", "the identity provider cannot be reached to check the ID token; retry later"}
	// TooManyNewIdentities: the ID token's user made POST /public_identity create
	// identity_server.oidc.new_identities_per_user new identities in its window; Retry-After
	// says when the window ends. Emails that have a record are still answered.
	TooManyNewIdentities = Code{http.StatusTooManyRequests, "too_many_new_identities", "this user created too many new identities; try again later"}

	// Verification.
	InvalidAuthToken         = Code{http.StatusUnauthorized, "invalid_auth_token", "invalid auth token for this app"}
	NoUnlockKey              = Code{http.StatusForbidden, "no_unlock_key", "the address has an identity that is not registered yet"}
	NoUnlockEmail            = Code{http.StatusForbidden, "no_unlock_email", "the address has no identity in this app"}
	InvalidVerificationCode  = Code{http.StatusUnauthorized, "invalid_verification_code", "wrong verification code"}
	VerificationCodeExpired  = Code{http.StatusGone, "verification_code_expired", "the verification code expired"}
	VerificationCodeNotFound = Code{http.StatusNotFound, "verification_code_not_found", "no pending verification code for that address"}
	// VerificationCodeUsed: the code was right but is used up already (a client retrying after
	// a lost answer); not counted as a wrong code.
	VerificationCodeUsed = Code{http.StatusConflict, "verification_code_used", "the verification code was already used; request a new one"}
	TooManyAttempts      = Code{http.StatusTooManyRequests, "too_many_attempts", "too many wrong codes; try again later"}
	MaxAttemptsReached   = Code{http.StatusTooManyRequests, "max_attempts_reached", "too many requests; try again later"}
	SendEmailError       = Code{http.StatusInternalServerError, "send_email_error", "the mail could not be sent"}

	// Admin API.
	AdminUnauthorized = Code{http.StatusUnauthorized, "invalid_admin_token", "missing or wrong admin token"}
	AdminDisabled     = Code{http.StatusNotFound, "admin_disabled", "the admin API has no token configured"}
	AppIsDeclared     = Code{http.StatusConflict, "app_is_declared", "this app is declared in the config file and is read-only"}
	// AppNameTaken: another app has the name (case-insensitively); names tell apps apart.
	AppNameTaken = Code{http.StatusConflict, "app_name_taken", "an app with this name already exists"}
	// AdminLocked: too many wrong admin tokens from one client address (admin API and console
	// sign-in together); refused, even with the right token, until the lock ends (Retry-After).
	AdminLocked = Code{http.StatusTooManyRequests, "admin_locked", "too many wrong admin tokens from this address; try again later"}

	// Exit tool (idvault exit). Unauthorized (above) answers a missing or wrong bearer token.
	InvalidIdentity     = Code{http.StatusBadRequest, "invalid_identity", "some identities cannot be imported; nothing was stored"}
	UnsupportedFormat   = Code{http.StatusBadRequest, "unsupported_format", "the data is not in a known encryption format"}
	TruncatedData       = Code{http.StatusBadRequest, "truncated_data", "the data is too short to hold its format's header"}
	KeyNotFound         = Code{http.StatusNotFound, "key_not_found", "no imported identity gives the key of this resource"}
	DecryptionFailed    = Code{http.StatusUnprocessableEntity, "decryption_failed", "the data does not decrypt: tampered, cut short or under another key"}
	PayloadTooLarge     = Code{http.StatusRequestEntityTooLarge, "payload_too_large", "the request is over the configured size limit"}
	DatabaseUnavailable = Code{http.StatusServiceUnavailable, "database_unavailable", "the database is unavailable; retry later"}
	// ServerBusy: the request's body and buffers do not fit in exit.memory_budget beside the
	// requests in flight; Retry-After says when to try again.
	ServerBusy = Code{http.StatusServiceUnavailable, "server_busy", "the server is at its memory budget for requests in flight (exit.memory_budget); retry later"}
)

// Catalog lists every code of `idvault serve`'s interfaces, for the HTTP API page
// (app/openapi/API.md), the OpenAPI document and tests. The exit server's codes are in ExitCatalog.
var Catalog = []Code{
	InvalidBody, NotFound, MethodNotAllowed, BodyTooLarge, HeaderTooLarge, InternalError, FeatureNotEnabled, HostNotAllowed,
	MalformedRequest,
	InvalidAppID, AppNotFound, AppIsNotTest, AppNoSecret,
	InvalidEmail, TooManyEmails, UserNotFound,
	NoEmailProvided, InvalidEmailIS, UnknownUser, UnsupportedMediaType, Unauthorized, ISAppUnavailable,
	InvalidToken, Forbidden, EmailNotVerified, NoEmailClaim, IdentityProviderUnavailable, TooManyNewIdentities,
	InvalidAuthToken, NoUnlockKey, NoUnlockEmail, InvalidVerificationCode, VerificationCodeExpired,
	VerificationCodeNotFound, VerificationCodeUsed, TooManyAttempts, MaxAttemptsReached, SendEmailError,
	AdminUnauthorized, AdminDisabled, AppIsDeclared, AppNameTaken, AdminLocked,
}

// ExitCatalog lists every code the exit server (`idvault exit`, a separate server with its own
// API) answers, for the HTTP API page (app/openapi/API.md) and for tests.
var ExitCatalog = []Code{
	InvalidBody, InvalidIdentity, UnsupportedFormat, TruncatedData, KeyNotFound, DecryptionFailed,
	PayloadTooLarge, Unauthorized, DatabaseUnavailable, NotFound, MethodNotAllowed, InternalError,
	HeaderTooLarge, ExitHostNotAllowed, MalformedRequest, ServerBusy,
}

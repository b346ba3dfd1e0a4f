package identity

import "fmt"

// Identity targets.
const (
	// TargetUser is the target of permanent identities.
	TargetUser = "user"
	// TargetEmail is the target of secret email provisional identities (and
	// of legacy public ones).
	TargetEmail = "email"
	// TargetPhoneNumber is the target of secret phone provisional identities.
	TargetPhoneNumber = "phone_number"
	// TargetHashedEmail is the target of public email provisional identities.
	TargetHashedEmail = "hashed_email"
	// TargetHashedPhoneNumber is the target of public phone provisional
	// identities.
	TargetHashedPhoneNumber = "hashed_phone_number"
)

// validProvisionalTarget reports whether target may be used to create a
// provisional identity.
func validProvisionalTarget(target string) bool {
	return target == TargetEmail || target == TargetPhoneNumber
}

// describeTarget names a target for an error message: known targets by name,
// any other value anonymously.
func describeTarget(target string) string {
	switch target {
	case TargetUser, TargetEmail, TargetPhoneNumber, TargetHashedEmail, TargetHashedPhoneNumber:
		return fmt.Sprintf("%q", target)
	}
	return "(unknown target)"
}

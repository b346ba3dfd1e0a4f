package block

// GroupMember is a group private encryption key sealed for a user key.
// UserID is serialized from group block version 2 on.
type GroupMember struct {
	UserID                     [UserIDSize]byte
	UserPublicEncryptionKey    [PublicKeySize]byte
	SealedPrivateEncryptionKey [SealedKeySize]byte
}

// GroupProvisionalMember is a group private encryption key sealed twice for
// a provisional identity. The public encryption keys are serialized in
// version 3 only.
type GroupProvisionalMember struct {
	AppPublicSignatureKey              [PublicKeySize]byte
	TankerPublicSignatureKey           [PublicKeySize]byte
	AppPublicEncryptionKey             [PublicKeySize]byte
	TankerPublicEncryptionKey          [PublicKeySize]byte
	TwoTimesSealedPrivateEncryptionKey [TwoTimesSealedKeySize]byte
}

// UserGroupCreationAction creates a group (natures 10, 15 and 17).
type UserGroupCreationAction struct {
	// Version is 1, 2 or 3 (natures 10, 15, 17).
	Version                   int
	PublicSignatureKey        [PublicKeySize]byte
	PublicEncryptionKey       [PublicKeySize]byte
	SealedPrivateSignatureKey [SealedSignatureKeySize]byte
	Members                   []GroupMember
	// ProvisionalMembers exist from version 2 on.
	ProvisionalMembers []GroupProvisionalMember
	SelfSignature      [SignatureSize]byte
}

// Nature returns the nature matching Version.
func (a *UserGroupCreationAction) Nature() Nature {
	switch a.Version {
	case 2:
		return UserGroupCreationV2
	case 3:
		return UserGroupCreationV3
	}
	return UserGroupCreationV1
}

// AppendPayload appends the fields of the version.
func (a *UserGroupCreationAction) AppendPayload(dst []byte) []byte {
	dst = append(dst, a.PublicSignatureKey[:]...)
	dst = append(dst, a.PublicEncryptionKey[:]...)
	dst = append(dst, a.SealedPrivateSignatureKey[:]...)
	dst = appendMembers(dst, a.Version, a.Members, a.ProvisionalMembers)
	return append(dst, a.SelfSignature[:]...)
}

func parseUserGroupCreation(r *reader, n Nature) *UserGroupCreationAction {
	a := &UserGroupCreationAction{Version: groupVersion(n)}
	r.fixed(a.PublicSignatureKey[:])
	r.fixed(a.PublicEncryptionKey[:])
	r.fixed(a.SealedPrivateSignatureKey[:])
	a.Members, a.ProvisionalMembers = parseMembers(r, a.Version)
	r.fixed(a.SelfSignature[:])
	return a
}

// UserGroupAdditionAction adds members to a group (natures 12, 16 and 18).
type UserGroupAdditionAction struct {
	// Version is 1, 2 or 3 (natures 12, 16, 18).
	Version                int
	GroupID                [PublicKeySize]byte
	PreviousGroupBlockHash Hash
	Members                []GroupMember
	// ProvisionalMembers exist from version 2 on.
	ProvisionalMembers []GroupProvisionalMember
	SelfSignature      [SignatureSize]byte
}

// Nature returns the nature matching Version.
func (a *UserGroupAdditionAction) Nature() Nature {
	switch a.Version {
	case 2:
		return UserGroupAdditionV2
	case 3:
		return UserGroupAdditionV3
	}
	return UserGroupAdditionV1
}

// AppendPayload appends the fields of the version.
func (a *UserGroupAdditionAction) AppendPayload(dst []byte) []byte {
	dst = append(dst, a.GroupID[:]...)
	dst = append(dst, a.PreviousGroupBlockHash[:]...)
	dst = appendMembers(dst, a.Version, a.Members, a.ProvisionalMembers)
	return append(dst, a.SelfSignature[:]...)
}

func parseUserGroupAddition(r *reader, n Nature) *UserGroupAdditionAction {
	a := &UserGroupAdditionAction{Version: groupVersion(n)}
	r.fixed(a.GroupID[:])
	r.fixed(a.PreviousGroupBlockHash[:])
	a.Members, a.ProvisionalMembers = parseMembers(r, a.Version)
	r.fixed(a.SelfSignature[:])
	return a
}

func groupVersion(n Nature) int {
	switch n {
	case UserGroupCreationV2, UserGroupAdditionV2:
		return 2
	case UserGroupCreationV3, UserGroupAdditionV3:
		return 3
	}
	return 1
}

func appendMembers(dst []byte, version int, members []GroupMember, provisional []GroupProvisionalMember) []byte {
	return appendMemberLists(dst, version, members, provisional, true)
}

// appendMemberLists writes the member list and (version 2 on) the provisional member list of a
// group block, each preceded by its varint count when withCounts (the payload), without the
// counts for what the self signature covers.
func appendMemberLists(dst []byte, version int, members []GroupMember, provisional []GroupProvisionalMember, withCounts bool) []byte {
	if withCounts {
		dst = AppendVarint(dst, uint64(len(members)))
	}
	for _, m := range members {
		if version >= 2 {
			dst = append(dst, m.UserID[:]...)
		}
		dst = append(dst, m.UserPublicEncryptionKey[:]...)
		dst = append(dst, m.SealedPrivateEncryptionKey[:]...)
	}
	if version < 2 {
		return dst
	}
	if withCounts {
		dst = AppendVarint(dst, uint64(len(provisional)))
	}
	for _, p := range provisional {
		dst = append(dst, p.AppPublicSignatureKey[:]...)
		dst = append(dst, p.TankerPublicSignatureKey[:]...)
		if version >= 3 {
			dst = append(dst, p.AppPublicEncryptionKey[:]...)
			dst = append(dst, p.TankerPublicEncryptionKey[:]...)
		}
		dst = append(dst, p.TwoTimesSealedPrivateEncryptionKey[:]...)
	}
	return dst
}

func parseMembers(r *reader, version int) ([]GroupMember, []GroupProvisionalMember) {
	size := memberV1Size
	if version >= 2 {
		size = memberV2Size
	}
	members := make([]GroupMember, r.count(size))
	for i := range members {
		m := &members[i]
		if version >= 2 {
			r.fixed(m.UserID[:])
		}
		r.fixed(m.UserPublicEncryptionKey[:])
		r.fixed(m.SealedPrivateEncryptionKey[:])
	}
	if version < 2 {
		return members, nil
	}
	size = provisionalMemberV2Size
	if version >= 3 {
		size = provisionalMemberV3Size
	}
	provisional := make([]GroupProvisionalMember, r.count(size))
	for i := range provisional {
		p := &provisional[i]
		r.fixed(p.AppPublicSignatureKey[:])
		r.fixed(p.TankerPublicSignatureKey[:])
		if version >= 3 {
			r.fixed(p.AppPublicEncryptionKey[:])
			r.fixed(p.TankerPublicEncryptionKey[:])
		}
		r.fixed(p.TwoTimesSealedPrivateEncryptionKey[:])
	}
	return members, provisional
}

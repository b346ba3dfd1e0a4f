package block

import "strconv"

// Nature is the block type (exit/FORMATS.md, "Blocks").
type Nature uint64

// The natures of trustchain blocks.
const (
	TrustchainCreation          Nature = 1
	DeviceCreationV1            Nature = 2
	KeyPublishToDevice          Nature = 3
	DeviceRevocationV1          Nature = 4
	UserReset                   Nature = 5
	DeviceCreationV2            Nature = 6
	DeviceCreationV3            Nature = 7
	KeyPublishToUser            Nature = 8
	DeviceRevocationV2          Nature = 9
	UserGroupCreationV1         Nature = 10
	KeyPublishToUserGroup       Nature = 11
	UserGroupAdditionV1         Nature = 12
	KeyPublishToProvisionalUser Nature = 13
	ProvisionalIdentityClaim    Nature = 14
	UserGroupCreationV2         Nature = 15
	UserGroupAdditionV2         Nature = 16
	UserGroupCreationV3         Nature = 17
	UserGroupAdditionV3         Nature = 18
)

var natureNames = [...]string{
	TrustchainCreation:          "trustchain_creation",
	DeviceCreationV1:            "device_creation_v1",
	KeyPublishToDevice:          "key_publish_to_device",
	DeviceRevocationV1:          "device_revocation_v1",
	UserReset:                   "user_reset",
	DeviceCreationV2:            "device_creation_v2",
	DeviceCreationV3:            "device_creation_v3",
	KeyPublishToUser:            "key_publish_to_user",
	DeviceRevocationV2:          "device_revocation_v2",
	UserGroupCreationV1:         "user_group_creation_v1",
	KeyPublishToUserGroup:       "key_publish_to_user_group",
	UserGroupAdditionV1:         "user_group_addition_v1",
	KeyPublishToProvisionalUser: "key_publish_to_provisional_user",
	ProvisionalIdentityClaim:    "provisional_identity_claim",
	UserGroupCreationV2:         "user_group_creation_v2",
	UserGroupAdditionV2:         "user_group_addition_v2",
	UserGroupCreationV3:         "user_group_creation_v3",
	UserGroupAdditionV3:         "user_group_addition_v3",
}

// Known reports whether n is one of the natures 1 to 18.
func (n Nature) Known() bool { return n >= TrustchainCreation && n <= UserGroupAdditionV3 }

// String returns the snake_case name of the nature, or its number.
func (n Nature) String() string {
	if n.Known() {
		return natureNames[n]
	}
	return "nature_" + strconv.FormatUint(uint64(n), 10)
}

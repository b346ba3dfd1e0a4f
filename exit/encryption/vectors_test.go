package encryption

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// vector is one published test vector of Tanker's SDKs (exit/FORMATS.md). key is the
// resource key (1 to 8) or the session key (9 to 11).
type vector struct {
	name       string
	key        string
	clear      string
	encrypted  string
	resourceID string
	padding    Padding
}

var vectors = []vector{
	{name: "v1", key: "760d8e805cbca8b6daeacf6646cad7eb4f3abc69ac9bce77358ea831d72f14dd", clear: "this is very secret", encrypted: "01c95de60a34b289427a6ddad77ba458a7bfc84ff5529e12049dfcaa83b0715991fbaae26d4b0107dcced9ccc4addf897b860e1422563c4316979a68", resourceID: "c4addf897b860e1422563c4316979a68"},
	{name: "v2", key: "760d8e805cbca8b6daeacf6646cad7eb4f3abc69ac9bce77358ea831d72f14dd", clear: "this is very secret", encrypted: "023293a3f86ca88225bc177eb5659bee0dfdcfc65c6db472e05b33274c8384d1adda5f86024642917130652e7247e64820a186917f9cb55e91b3652d", resourceID: "7247e64820a186917f9cb55e91b3652d"},
	{name: "v3", key: "760d8e805cbca8b6daeacf6646cad7eb4f3abc69ac9bce77358ea831d72f14dd", clear: "this is very secret", encrypted: "0337b53d5534b5c13fe3728147f0cada29996e04a84181a0e05e8e3a08d378fa059f17fa", resourceID: "a84181a0e05e8e3a08d378fa059f17fa"},
	{name: "v5", key: "760d8e805cbca8b6daeacf6646cad7eb4f3abc69ac9bce77358ea831d72f14dd", clear: "this is very secret", encrypted: "05c174531edd7777872c026ef236df287e70eab6e7727ddd425da1abb36ed18bead7f5ad23c0bd8c1f68c79ef2e9d89ef97e93c4290d96402dbcf80bb84ffc489b83d1055140fcc27f6ed916", resourceID: "c174531edd7777872c026ef236df287e"},
	{name: "v6", key: "5695a2362b8b1192f9560bcbf2076a21032c823bbe21602f64f9c29fe5e56d7f", clear: "this is very secret", encrypted: "0646fd4aab34243b970e139032885cbac7824debb05bd2266ec67c05f0fc779534a2fa7e6e36", resourceID: "d2266ec67c05f0fc779534a2fa7e6e36"},
	{name: "v7", key: "5c07dfd06f790850ef66ca789353c05b4fd0a7b89cc80d17b761d04d98317e28", clear: "this is very secret", encrypted: "07305f9cdd6542fe6123a622f84f16cd224a73a899954fe67c9012b261d9f33ea9b256655edecff2b4212345dc34d7e8695d0a7aeba6323a33282f52fe2d8451d8508bf8227822093cf188c8f675", resourceID: "305f9cdd6542fe6123a622f84f16cd22"},
	{name: "v9", key: "1889a4b6660c144e3aef2946cb6e10f326f5f9484c999549967f48b0cc68e5a3", clear: "this is very secret", encrypted: "0966f34d6b509852389d3e5553f2be226c950659029c534fec2340607720ee075c6f51cf88e500aa3a90088e4b2293bc240262897951958e2b03cdcfc62390b4e394e598", resourceID: "0066f34d6b509852389d3e5553f2be226c950659029c534fec2340607720ee075c"},
	{name: "v10", key: "6fc5d1e4183dfa71710c54b098129574aeae2513d39fc3dd180593b25aa477f7", clear: "this is very secret", encrypted: "0a1e6e97bf8debbee9c6604d7b5f912a830aaab7e32e700685c992ff0a03218678515a1fbf880a41323f9e8f598b96aeb57a505bb7fd6c09c72588c16a4c327f6913d0fb1156", resourceID: "001e6e97bf8debbee9c6604d7b5f912a830aaab7e32e700685c992ff0a03218678"},
	{name: "v4 empty", key: "daa53d070c4b6354e36f96c1144c23cc162352a1c553e3ead9c41d284c4543a9", clear: "", encrypted: "04000010005e4454a78321d8778c7a25c946520a601db125af1e8584a9cf19712679f347d1f6f0f7028547fbe85e162533f6667bb9d5a51de923710b75", resourceID: "5e4454a78321d8778c7a25c946520a60"},
	{name: "v4 default chunk", key: "af38679d2056386befdd626d601bf939ad7143c03014edea56ff1f8a3090b68b", clear: "this is a secret", encrypted: "0400001000f23850316cfaaa968c1b2543f438e361552450e83b03e9f601f1735f3e52b28fc01f0dcdac8f052abd31320e16dd204058a2fec6f35dff25e8c933c108e0b1b00be4868c36b82fbf", resourceID: "f23850316cfaaa968c1b2543f438e361"},
	{name: "v4 chunk size 70", key: "0a073dd02c2d17f949d9358ef7fe7bd1f60bf15ca4321ee4aa18e197bff45efe", clear: "this is a secret", encrypted: "044600000040ec8d84adbe2b2732c90a1ec68f2bdbcd07d03ac874e1087e5eaaa282d88bf5ed22e630bbaa9d71e39a0422673ddfcf2848e2eb4bb430927023491cc931cbda1a044600000040ec8d84adbe2b2732c90a1ec68f2bdb3f34f3d32390fc0635da991e81df88fc211eed3a282d5182777cf6be54d492cd86d48855201fd6444730402fe8f450", resourceID: "40ec8d84adbe2b2732c90a1ec68f2bdb"},
	{name: "v8 padded empty", key: "07a90bb5a12a7cfdba00276553e194ee0d5a25ce7359df84dea03d0660c245a6", clear: "", encrypted: "0800001000d387be8da3bf4aac71736ad0d4ff7de32ade1548d8e91007cb268b3d6642115262d1fd8ad73cce3c7bf52d42634f68e6510f7fc4da3a083fbc446cab5495637e2b4e28", resourceID: "d387be8da3bf4aac71736ad0d4ff7de3"},
	{name: "v8 unpadded empty", key: "d45c8fe293df44905149d98c61174c54922f1182555fc27b03131b212b664cdf", clear: "", encrypted: "0800001000a7f2ee9a97a7018fa4f113298679f3ac7850546c09b2290f3d465252f6e95b25a2c1db5477de795f1f8e475517eb3f443a4a45f92acd8a8f3bb3", resourceID: "a7f2ee9a97a7018fa4f113298679f3ac", padding: PaddingOff},
	{name: "v8 padded default chunk", key: "7d0c781dc19d07a98fd29631b32c9425088b7f80f316d570ecf103cc60b41cda", clear: "this is a secret", encrypted: "0800001000c9fb70fba0b79df6509332d9e59359ee0ac2f292278d25d3e003229f1ee8fca40559bd91e0854a041c1f059e9d1676f0b745eeacdb4c327515d5caf8cf3240941d40244d8fd11d5c66", resourceID: "c9fb70fba0b79df6509332d9e59359ee"},
	{name: "v8 padded chunk 70", key: "e03a63ce7a704746d7b7456a7ea8d6f0d113b9ab42535428028d8673123a548d", clear: "this is a secret", encrypted: "08460000009ce15d7e2fcc753f2fc958bdc5271f843fad89849b45703c336ed40c6e2ff400a0894d55b24f2c207635616cd043c7441a42df38e147f2b995bd5dc34faccd0d0608460000009ce15d7e2fcc753f2fc958bdc5271f84f58d686a0854af82f36f086b1781d4c424130a1910b2984fb03c5555c2b7b7c54b371f2e955de317711f0b0e552821028408460000009ce15d7e2fcc753f2fc958bdc5271f84dd459f15c6db4b907d1d9aba2ba646f5d43223b2f7cf5389583f8bcf0d11b681989caff740b5e209d5", resourceID: "9ce15d7e2fcc753f2fc958bdc5271f84"},
	{name: "v8 unpadded chunk 70", key: "4b3e5905bf0ace531cdcbcc785b8b8b3d1e8770655abf9ad83aa7f0e79294822", clear: "this is a secret", encrypted: "0846000000a504b761916d02c979e36d5b1f253fee2dd88df1050afb0c1a8f6a90fc52a1dd67e6d3d6dda2a125c0641a0211a70a116f125a65ed6beaebfe2a17375c7e26d07f0846000000a504b761916d02c979e36d5b1f253fee797ab1f402ba88e3ddb775ddde92e9488745b70cb83804a9e0c353d4cb2de9ea344c941d620c650c012880d036c87d57f20846000000a504b761916d02c979e36d5b1f253feee46f97ef7f14b7128e4aac62077f9ce84d34c3d50e4a5271e5b91f06b27b00d435a1f776ff48bd03a0", resourceID: "a504b761916d02c979e36d5b1f253fee", padding: PaddingOff},
	{name: "v11 padded empty", key: "41d50524565e37553e5ae8fa667727c4ad44a01047ebc3666ab24f3f1b915491", clear: "", encrypted: "0bd2566dbbf50af5d12385a0edf622726ff271f5a70d8de81d160959bb54606182000010000c89f404897299ba9ea0429f38a9774484228edb6d5de65fe517aac0391b", resourceID: "00d2566dbbf50af5d12385a0edf622726ff271f5a70d8de81d160959bb54606182"},
	{name: "v11 empty step 1", key: "ed87ab308ba34e15eb36ea9f5a09c336b08ab54c1a129ae18ed338fd5a465cdb", clear: "", encrypted: "0b0eebfb0014c37157f2a2e7e0a4e7dd7b5dc9cfde01cea5d76dbfcb3b9315ffb800001000cdef33c3abe8d8c86121fa409c45661bc25043e9a6", resourceID: "000eebfb0014c37157f2a2e7e0a4e7dd7b5dc9cfde01cea5d76dbfcb3b9315ffb8", padding: PaddingOff},
	{name: "v11 padded default chunk", key: "2fcfcca6e13bdf0a33c62afeb71d986c825546e34e5f5ab22d64d427a1abc54a", clear: "this is very secret", encrypted: "0b131a198d23c976d74faf69920579eb798d0bb11c7dc5f3c67419ce4d3fce3a6500001000f56acdf0d450a1eca26103941c0602cd507fc01cadae0d48a3fb7bc7680d2830680c1e4456051994", resourceID: "00131a198d23c976d74faf69920579eb798d0bb11c7dc5f3c67419ce4d3fce3a65"},
	{name: "v11 padded chunk 30", key: "be12f67965a320d2c9b3ed9ca7c5c10ad772397465fffd7fbbd42239d46f795b", clear: "this is very secret", encrypted: "0be40ec674fb616eb5101f6791958bf6fa9746cc6b6fdba67c15619448b62c043a1e000000b590005fd688072bc1f0bce002c577e324844f50ca398e668c2bdbf7f4541f731e8b79785634367b0a478e5d6fd64614bd1722f26203743c1e8889073567017b2b2a183f2545eac25586e39d26345aa4", resourceID: "00e40ec674fb616eb5101f6791958bf6fa9746cc6b6fdba67c15619448b62c043a"},
	{name: "v11 unpadded chunk 30", key: "bcb7c3089201f90515521c05dce29960a461a3770d2c37f0ed3eb12341407664", clear: "this is very secret", encrypted: "0ba3e65d0ecc6f7ed4b2c77ea087a6de7ccabe4a9ba13dfc9362f84911b10969ae1e00000075bee5088361cbc5a0f9a69d1352b063612085f7a80ef896d073a6f68c303ced7bd547e6f2b37ea869757ee7a4de40c52edcc94d32713293687119", resourceID: "00a3e65d0ecc6f7ed4b2c77ea087a6de7ccabe4a9ba13dfc9362f84911b10969ae", padding: PaddingOff},
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// keysFor returns a KeyMap publishing the vector key under the ID an SDK
// would publish it: the simple ID, or the session ID.
func keysFor(t testing.TB, v vector) KeyMap {
	_, rid, err := ExtractResourceID(mustHex(t, v.encrypted))
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	return KeyMap{rid.ID: mustHex(t, v.key)}
}

// vectorRandom returns the bytes Encrypt draws from EncryptOptions.Rand to
// reproduce the vector exactly (IVs, IV seeds or seed), plus the explicit
// IDs to pass.
func vectorRandom(t testing.TB, vec vector) (EncryptOptions, bool) {
	enc := mustHex(t, vec.encrypted)
	v := Version(enc[0])
	var rnd []byte
	opts := EncryptOptions{Padding: vec.padding}
	id := SimpleID{}
	switch v {
	case V1:
		return opts, false
	case V2:
		rnd = enc[1 : 1+ivSize]
	case V5, V7:
		copy(id[:], enc[1:])
		rnd = enc[1+IDSize : 1+IDSize+ivSize]
	case V9, V10, V11:
		copy(id[:], enc[1:])
		rnd = enc[1+IDSize : 1+2*IDSize]
	case V4, V8:
		copy(id[:], enc[5:])
		size := int(binary.LittleEndian.Uint32(enc[1:]))
		opts.ChunkSize = size
		for off := 0; off < len(enc); off += size {
			rnd = append(rnd, enc[off+5+IDSize:off+v48Header]...)
		}
	}
	if v == V11 {
		opts.ChunkSize = int(binary.LittleEndian.Uint32(enc[1+2*IDSize:]))
	}
	opts.ResourceID = &id
	opts.SessionID = &id
	opts.Rand = bytes.NewReader(rnd)
	return opts, true
}

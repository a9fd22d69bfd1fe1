# hashlib: digests of generated data through OpenSSL's implementations,
# which pick SIMD/SHA-extension code paths from CPUID at run time.
import hashlib

data = bytes((i * 131 + (i >> 8)) & 0xFF for i in range(3_000_000))
for name in ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "blake2b", "blake2s"]:
    print(name, hashlib.new(name, data).hexdigest())
h = hashlib.sha256()
for start in range(0, len(data), 65521):
    h.update(data[start:start + 65521])
print("incremental sha256", h.hexdigest())
print("shake_128", hashlib.shake_128(data).hexdigest(32))
print("pbkdf2", hashlib.pbkdf2_hmac("sha256", b"password", b"salt", 20000).hex())
print("END hashlib_digests")

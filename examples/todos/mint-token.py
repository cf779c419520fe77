#!/usr/bin/env python3
"""Tokens for the todos example (examples/todos/README.md), with Python's standard library.

  mint-token.py new-keys          prints a JWK Set of one new HS256 key (for --jwt-keys)
  mint-token.py KEYS USER         prints a token that reads USER's feed for an hour

Every user's token carries the same pattern, "todos-{sub}": the server reads {sub} as the
token's "sub", so a token reads its own user's feed and no other (docs/security.md §4.2).
Mint tokens where users sign in (your backend), never in the app.
"""
import base64
import hashlib
import hmac
import json
import secrets
import sys
import time


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def new_keys():
    return {"keys": [{"kty": "oct", "kid": "todos-1", "k": b64url(secrets.token_bytes(32))}]}


def token(keys, user, lifetime=3600):
    key = keys["keys"][0]
    header = {"alg": "HS256", "typ": "JWT", "kid": key["kid"]}
    claims = {"sub": user, "feeds": ["todos-{sub}"], "scope": "read", "exp": int(time.time()) + lifetime}
    signing_input = ".".join(b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims))
    secret = base64.urlsafe_b64decode(key["k"] + "=" * (-len(key["k"]) % 4))
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(signature)}"


if __name__ == "__main__":
    if sys.argv[1:] == ["new-keys"]:
        print(json.dumps(new_keys(), indent=2))
    elif len(sys.argv) == 3:
        with open(sys.argv[1]) as file:
            print(token(json.load(file), sys.argv[2]))
    else:
        sys.exit(__doc__)

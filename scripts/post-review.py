#!/usr/bin/env python3
"""POST an AdmissionReview to a running distenv-webhook and print the answer
with the JSON Patch decoded: a quick look at what the webhook does.

usage: post-review.py [--url URL] [--ca FILE] REVIEW.json
"""
import argparse
import base64
import json
import ssl
import sys
import urllib.error
import urllib.request


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="https://127.0.0.1:8443/mutate")
    ap.add_argument("--ca", default="certs/out/ca.crt")
    ap.add_argument("review")
    a = ap.parse_args()
    with open(a.review, "rb") as f:
        body = f.read()
    ctx = ssl.create_default_context(cafile=a.ca)
    req = urllib.request.Request(a.url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            status, text = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read()
    except (urllib.error.URLError, OSError) as e:
        print(f"post-review: {a.url}: {e}", file=sys.stderr)
        return 1
    answer = json.loads(text)
    resp = answer.get("response", {})
    if "patch" in resp:
        resp["patch"] = json.loads(base64.b64decode(resp["patch"]))
    print(f"HTTP {status}")
    print(json.dumps(answer, indent=2))
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())

"""The IAM stand-in's verdicts on tokens botocore presigns, as a client SDK would."""
import argparse
import datetime
import unittest

from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

import elasticache_iam

OPTS = argparse.Namespace(cache="lb-small", region="us-east-1", serverless=True, keys={"AKIATEST": "s3cret"})
AT = datetime.datetime(2026, 12, 2, 12, 0, 0, tzinfo=datetime.timezone.utc)


def token(cache="lb-small", user="default.iam-user", secret="s3cret", region="us-east-1", resource=True):
    url = f"http://{cache}/?Action=connect&User={user}" + ("&ResourceType=ServerlessCache" if resource else "")
    request = AWSRequest(method="GET", url=url)
    request.context["timestamp"] = AT.strftime("%Y%m%dT%H%M%SZ")
    auth = SigV4QueryAuth(Credentials("AKIATEST", secret), "elasticache", region, expires=900)
    auth._modify_request_before_signing(request)
    sig = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    auth._inject_signature_to_request(request, sig)
    return request.url.removeprefix("http://")


class VerdictTest(unittest.TestCase):
    def verdict(self, tok, user="default.iam-user", minutes=1):
        return elasticache_iam.verdict(tok, user, OPTS, now=AT + datetime.timedelta(minutes=minutes))

    def test_a_good_token_passes_within_its_fifteen_minutes(self):
        self.assertIsNone(self.verdict(token()))
        self.assertIn("expired", self.verdict(token(), minutes=16))
        self.assertIn("expired", self.verdict(token(), minutes=-1))

    def test_each_part_of_a_token_is_checked(self):
        self.assertIn("signature", self.verdict(token(secret="other")))
        self.assertIn("for cache", self.verdict(token(cache="another")))
        self.assertIn("scope", self.verdict(token(region="eu-west-1")))
        self.assertIn("ResourceType", self.verdict(token(resource=False)))
        self.assertIn("this user", self.verdict(token(), user="someone-else"))
        self.assertIn("presigned", self.verdict("lb-small/?Action=connect&User=default.iam-user&ResourceType=x"))


if __name__ == "__main__":
    unittest.main()

// AWS Signature Version 4 for the API's server routes (API Gateway's IAM authorization,
// service `execute-api`), with .NET Standard 2.0's own SHA-256 and HMAC: no package.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net.Http;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Tasks;

namespace Leaderboard
{
    /// <summary>AWS credentials: an access key pair and, for temporary credentials (a
    /// role's, e.g. a GameLift fleet's), a session token.</summary>
    public sealed class AwsCredentials
    {
        public readonly string AccessKeyId;
        public readonly string SecretAccessKey;
        public readonly string SessionToken;

        public AwsCredentials(string accessKeyId, string secretAccessKey, string sessionToken = null)
        {
            AccessKeyId = accessKeyId; SecretAccessKey = secretAccessKey; SessionToken = sessionToken;
        }

        /// <summary>From AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, as
        /// the AWS SDKs read them; throws when the pair is not set.</summary>
        public static Task<AwsCredentials> FromEnvironment()
        {
            string id = Environment.GetEnvironmentVariable("AWS_ACCESS_KEY_ID");
            string secret = Environment.GetEnvironmentVariable("AWS_SECRET_ACCESS_KEY");
            if (string.IsNullOrEmpty(id) || string.IsNullOrEmpty(secret))
                throw new InvalidOperationException("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set");
            return Task.FromResult(new AwsCredentials(id, secret, Environment.GetEnvironmentVariable("AWS_SESSION_TOKEN")));
        }
    }

    /// <summary>Signs a request as the AWS SDKs sign it for execute-api: the path as sent,
    /// encoded once more; the query's names and values encoded by RFC 3986 and sorted;
    /// `host`, `x-amz-date` and a session token signed; the body's SHA-256.</summary>
    public static class SigV4
    {
        /// <summary>Adds `x-amz-date`, `Authorization` (and `x-amz-security-token`) to
        /// `request`, whose body is `body` (UTF-8, or null), for `service` (API Gateway's
        /// execute-api unless a test says otherwise).</summary>
        public static void Sign(HttpRequestMessage request, string body, AwsCredentials credentials, string region, DateTime utcNow,
            string service = "execute-api")
        {
            var uri = request.RequestUri;
            string amzDate = utcNow.ToString("yyyyMMdd'T'HHmmss'Z'", CultureInfo.InvariantCulture);
            string date = amzDate.Substring(0, 8);
            var headers = new SortedDictionary<string, string>(StringComparer.Ordinal)
            {
                { "host", uri.IsDefaultPort ? uri.Host : uri.Host + ":" + uri.Port },
                { "x-amz-date", amzDate },
            };
            if (credentials.SessionToken != null) headers["x-amz-security-token"] = credentials.SessionToken;
            string signedHeaders = string.Join(";", headers.Keys);
            string canonical = string.Join("\n",
                request.Method.Method,
                CanonicalPath(uri.AbsolutePath),
                CanonicalQuery(uri.Query),
                string.Concat(headers.Select(h => h.Key + ":" + h.Value.Trim() + "\n")),
                signedHeaders,
                Hex(Sha256(Encoding.UTF8.GetBytes(body ?? ""))));
            string scope = date + "/" + region + "/" + service + "/aws4_request";
            string toSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + Hex(Sha256(Encoding.UTF8.GetBytes(canonical)));
            byte[] key = Hmac(Encoding.UTF8.GetBytes("AWS4" + credentials.SecretAccessKey), date);
            foreach (var part in new[] { region, service, "aws4_request" }) key = Hmac(key, part);
            string signature = Hex(Hmac(key, toSign));

            request.Headers.TryAddWithoutValidation("x-amz-date", amzDate);
            if (credentials.SessionToken != null)
                request.Headers.TryAddWithoutValidation("x-amz-security-token", credentials.SessionToken);
            request.Headers.TryAddWithoutValidation("Authorization", "AWS4-HMAC-SHA256 Credential=" + credentials.AccessKeyId + "/" + scope
                + ", SignedHeaders=" + signedHeaders + ", Signature=" + signature);
        }

        /// <summary>RFC 3986 percent-encoding: only A-Z a-z 0-9 - _ . ~ stay.</summary>
        public static string Encode(string text)
        {
            var sb = new StringBuilder();
            foreach (byte b in Encoding.UTF8.GetBytes(text))
            {
                char c = (char)b;
                if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~')
                    sb.Append(c);
                else
                    sb.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
            }
            return sb.ToString();
        }

        static string CanonicalPath(string path)
        {
            return string.Join("/", (path.Length == 0 ? "/" : path).Split('/').Select(Encode));
        }

        static string CanonicalQuery(string query)
        {
            if (query.StartsWith("?")) query = query.Substring(1);
            if (query.Length == 0) return "";
            return string.Join("&", query.Split('&')
                .Select(pair =>
                {
                    int eq = pair.IndexOf('=');
                    string name = eq < 0 ? pair : pair.Substring(0, eq), value = eq < 0 ? "" : pair.Substring(eq + 1);
                    return new KeyValuePair<string, string>(Encode(Uri.UnescapeDataString(name)), Encode(Uri.UnescapeDataString(value)));
                })
                .OrderBy(p => p.Key, StringComparer.Ordinal).ThenBy(p => p.Value, StringComparer.Ordinal)
                .Select(p => p.Key + "=" + p.Value));
        }

        static byte[] Sha256(byte[] data)
        {
            using (var sha = SHA256.Create()) return sha.ComputeHash(data);
        }

        static byte[] Hmac(byte[] key, string text)
        {
            using (var h = new HMACSHA256(key)) return h.ComputeHash(Encoding.UTF8.GetBytes(text));
        }

        static string Hex(byte[] bytes)
        {
            var sb = new StringBuilder(bytes.Length * 2);
            foreach (byte b in bytes) sb.Append(b.ToString("x2", CultureInfo.InvariantCulture));
            return sb.ToString();
        }
    }
}

"""The redaction corpus: realistic secrets that must go, look-alikes that carry meaning and must stay.

Every secret below is fake but has the exact shape of the real thing (prefix, length, alphabet);
the provider shapes follow gitleaks' rules. Shared by the redaction unit tests, the extraction
pipeline test and `tests-e2e/test_secrets_everywhere.py`, which drives all of it through every
write path (hook stdin, MCP, CLI, dashboard, extraction) and greps the data dir afterwards.
"""

from __future__ import annotations

import base64

# (label, text containing the secret, the secret that must disappear)
SECRETS: list[tuple[str, str, str]] = [
    (
        "anthropic",
        "export ANTHROPIC_KEY_USED=sk-ant-api03-Xq9vB2mN8kL4pR7tY1wE5uI3oA6sD0fG-hJ2kL9zX8cV7bN4mQ1wE3rT5yU7iO9pA2sD4fG6hJ8kL0zX1cV3bN5mQ7w-AbCdEfAA",
        "sk-ant-api03-Xq9vB2mN8kL4pR7tY1wE5uI3oA6sD0fG-hJ2kL9zX8cV7bN4mQ1wE3rT5yU7iO9pA2sD4fG6hJ8kL0zX1cV3bN5mQ7w-AbCdEfAA",
    ),
    (
        "anthropic in prose",
        "my key is sk-ant-admin01-Zy8xW7vU6tS5rQ4pO3nM2lK1jI0hG9fE8dC7bA6 ok?",
        "sk-ant-admin01-Zy8xW7vU6tS5rQ4pO3nM2lK1jI0hG9fE8dC7bA6",
    ),
    (
        "openai project",
        "OPENAI_API_KEY=sk-proj-4fJ8kL2mN9pQ3rS7tU1vW5xY0zA6bC8dE2fG4hJ6kL8mN0pQ2rS4tU6vW8xY0zA2bC4dE6fG8hJ0kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0fG2hJ4kL6mN8",
        "sk-proj-4fJ8kL2mN9pQ3rS7tU1vW5xY0zA6bC8dE2fG4hJ6kL8mN0pQ2rS4tU6vW8xY0zA2bC4dE6fG8hJ0kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0fG2hJ4kL6mN8",
    ),
    (
        "openai legacy",
        "client = OpenAI(api_key='sk-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5Kl7No9Qr1')",
        "sk-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5Kl7No9Qr1",
    ),
    ("aws access key id", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    (
        "aws secret in credentials file",
        "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "aws secret export",
        "export AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    ),
    (
        "github classic",
        "git clone https://ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r.git",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    (
        "github fine-grained",
        "token: github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab",
        "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab",
    ),
    (
        "gitlab",
        "curl --header 'PRIVATE-TOKEN: glpat-xR4nD0mT0k3nV4lu3zZ9' https://gitlab.com/api/v4/projects",
        "glpat-xR4nD0mT0k3nV4lu3zZ9",
    ),
    (
        "slack bot",
        "SLACK_BOT=xoxb-2048394857-1029384756123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-2048394857-1029384756123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "slack webhook",
        "post to https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/XXXXXXXXXXXXXXXXXXXXXXXX now",
        "XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    (
        "stripe secret",
        'stripe.api_key = "sk_live_51HqLyjWDarjtT1zdp7dcXYZabc123"',
        "sk_live_51HqLyjWDarjtT1zdp7dcXYZabc123",
    ),
    ("stripe restricted", "use rk_live_51HqLyjWDarjtT1zdAbCdEf0987 for the job", "rk_live_51HqLyjWDarjtT1zdAbCdEf0987"),
    (
        "google api key",
        "const key = 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY';",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    ),
    (
        "private key block",
        "cat id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDxk3Jq8mQ4\n-----END OPENSSH PRIVATE KEY-----\nnext line",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    ),
    (
        "truncated rsa block",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq3Zx9L0wP2kq4N8sVt…",
        "MIIEowIBAAKCAQEA7bq3Zx9L0wP2kq4N8sVt",
    ),
    ("password in url", "DATABASE_URL=postgres://app:Sup3rS3cret!@db.internal:5432/app", "Sup3rS3cret!"),
    ("password in redis url", "connect redis://:hunter2hunter2@cache:6379/0", "hunter2hunter2"),
    ("dotenv password", "DB_PASSWORD=correct-horse-battery\nDB_HOST=localhost", "correct-horse-battery"),
    ("dotenv quoted", 'SECRET_KEY_BASE="a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4"', "a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4"),
    ("shell export token", "export NPM_TOKEN=abcd1234efgh5678ijkl", "abcd1234efgh5678ijkl"),
    ("json password", '{"user": "ci", "password": "p@ssw0rd-2026"}', "p@ssw0rd-2026"),
    ("yaml client secret", "oauth:\n  client_secret: 8Qk3mZr7Yw1vT5pL\n", "8Qk3mZr7Yw1vT5pL"),
    ("camelCase key", "const apiKey = 'f3a9c2e17b4d';\n", "f3a9c2e17b4d"),
    ("cli flag", "mysql --password hunter2hunter2 -u root", "hunter2hunter2"),
    (
        "bearer header",
        "curl -H 'Authorization: Bearer 7f3kQ9zLm2Xv8Rt1Wp4Ys6Bn0Cd5Ef' https://api.example.com",
        "7f3kQ9zLm2Xv8Rt1Wp4Ys6Bn0Cd5Ef",
    ),
    ("basic auth header", "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"),
    (
        "jwt",
        "session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    ("curl user", "curl -u admin:s3cr3t-pass https://internal.example.com/api", "s3cr3t-pass"),
    ("mysql -p", "mysql -u root -pHunter2Hunter2 app_db", "Hunter2Hunter2"),
    ("run-together name", "PGPASSWORD=pg-pass-2026 psql -h db", "pg-pass-2026"),
    ("huggingface", "HF=hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    (
        "npm",
        "//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    # -- the leaks of issue 13: prose, odd URL passwords, providers the first redactor did not know
    (
        "aws secret in prose",
        "the AWS secret is HLxDsCxqjBLd3qbJskH53rGTD/2U3OpSH5r44wLz, rotate it monthly",
        "HLxDsCxqjBLd3qbJskH53rGTD/2U3OpSH5r44wLz",
    ),
    ("api key in prose", "api key: lHwqxDqMrz4iKFJpKp4mSxieBPO9DyaU", "lHwqxDqMrz4iKFJpKp4mSxieBPO9DyaU"),
    ("my token", "my token B73cojFZS1COqkUAV3q4WZwmT2Ox stopped working", "B73cojFZS1COqkUAV3q4WZwmT2Ox"),
    (
        "failing test command",
        "GITHUB_TOKEN=ghp_HTQi5TMpUFn3NcLSLcwLUKvlsmkYRJh5okeB PGPASSWORD=S3cr3tPassw0rd pytest tests/",
        "ghp_HTQi5TMpUFn3NcLSLcwLUKvlsmkYRJh5okeB",
    ),
    ("pgpassword in a command", "PGPASSWORD=S3cr3tPassw0rd pytest -x", "S3cr3tPassw0rd"),
    ("postgres url", "E  connection to postgres://app:S3cr3tPassw0rd@db.internal:5432/app failed", "S3cr3tPassw0rd"),
    ("url password with @", "DATABASE_URL=postgres://app:p@ss@w0rd!x@db.internal:5432/app", "p@ss@w0rd!x"),
    ("url password with /", "mongo mongodb://admin:s3cr/t+pa55@mongo.internal/admin", "s3cr/t+pa55"),
    (
        "record body",
        "deploy key ghp_YO4EHljlgbQ7vIHbcr8kruOONywonsJouuey and password=hunter2",
        "ghp_YO4EHljlgbQ7vIHbcr8kruOONywonsJouuey",
    ),
    ("password=hunter2", "deploy with password=hunter2 for now", "hunter2"),
    (
        "slack app token",
        "SLACK_APP=xapp-1-A098C2VF7AI-4164499178500-aa4ff7691c548d68d7b79d6bd1ace221096efca19d4413b5699c91b43bfed1b9",
        "aa4ff7691c548d68d7b79d6bd1ace221096efca19d4413b5699c91b43bfed1b9",
    ),
    ("twilio", "client = Client(sid, 'SK41a540742fb2b86177e6c1134bc94982')", "SK41a540742fb2b86177e6c1134bc94982"),
    (
        "telegram",
        "telegram_bot: 550020184:AAlQ2uLfomNZX8XItt5MadHJQCFV1u90Ht7",
        "550020184:AAlQ2uLfomNZX8XItt5MadHJQCFV1u90Ht7",
    ),
    (
        "discord",
        "discord_bot = e6cf601f5430492f16d004941d87f037a0ea71d703b4eb4b79284453140ebcfd",
        "e6cf601f5430492f16d004941d87f037a0ea71d703b4eb4b79284453140ebcfd",
    ),
    ("mailchimp", "mailchimp: 2e8ac36ac2fd90ecdf128604a96d9062-us21", "2e8ac36ac2fd90ecdf128604a96d9062-us21"),
    ("square", "square client uses sq0atp-oqiXBOucuxghD3w0k_togS in prod", "sq0atp-oqiXBOucuxghD3w0k_togS"),
    ("shopify", "X-Shopify-Access: 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", "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"),
    (
        "vault",
        "vault login hvs.D9QUpa_lmI5b1rarFSt23cTUQSynsuv2h3p_0AtWcYYR2ZKkFZvg74n5sfydE3f-I2fSy6Zu4A3YhYZCy2Aeec5YZq6l-_5",
        "hvs.D9QUpa_lmI5b1rarFSt23cTUQSynsuv2h3p_0AtWcYYR2ZKkFZvg74n5sfydE3f-I2fSy6Zu4A3YhYZCy2Aeec5YZq6l-_5",
    ),
    (
        "databricks",
        "databricks configure with dapi201f5730d6ef1d168f44405295f6f072",
        "dapi201f5730d6ef1d168f44405295f6f072",
    ),
    (
        "age",
        "# created: 2026\nAGE-SECRET-KEY-1A8YYCTVRPCDU4FUTG0YM2E60NJUQXUA0TSPAD3QGM40UPE3XGZ4UPYY8H9",
        "AGE-SECRET-KEY-1A8YYCTVRPCDU4FUTG0YM2E60NJUQXUA0TSPAD3QGM40UPE3XGZ4UPYY8H9",
    ),
    (
        "linear",
        "linear: lin_api_NWQX5lVKF4KDKTaDGTb9NvJV9wf4AWA253fMn8vj",
        "lin_api_NWQX5lVKF4KDKTaDGTb9NvJV9wf4AWA253fMn8vj",
    ),
    (
        "postman",
        "postman collection run --api PMAK-342c9f9d6f63c9129e6f01d2-f963a09f05a19d0d4d1b45bc79f603a517",
        "PMAK-342c9f9d6f63c9129e6f01d2-f963a09f05a19d0d4d1b45bc79f603a517",
    ),
    ("new relic", "newrelic_user: NRAK-OSWZ7SAAMQE9PIG0Z2SU9QE1SO1", "NRAK-OSWZ7SAAMQE9PIG0Z2SU9QE1SO1"),
    (
        "artifactory",
        "jfrog uses AKCphE5pgenhvnkRfPwzpmLGuhfRu9ADSAyzexKAGlqsYSyEIeIj61ewP1TNaOvwAL4AVHy8k here",
        "AKCphE5pgenhvnkRfPwzpmLGuhfRu9ADSAyzexKAGlqsYSyEIeIj61ewP1TNaOvwAL4AVHy8k",
    ),
    (
        "doppler",
        "doppler run --token dp.pt.gPn95U7z0O3GgMTnhQ2OzAFRH3nzKe3rCSCax0m0sF1",
        "dp.pt.gPn95U7z0O3GgMTnhQ2OzAFRH3nzKe3rCSCax0m0sF1",
    ),
    (
        "sentry",
        "sentry-cli --auth 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",
        "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",
    ),
    ("docker login -p", "docker login registry.example.com -u deploy -p DkMq3DH6AUu2ryju7OJc", "DkMq3DH6AUu2ryju7OJc"),
    ("docker login quoted", "docker login -u ci --password 'DkMq3DH6AUu2ryju7OJc' ghcr.io", "DkMq3DH6AUu2ryju7OJc"),
    ("netrc", "machine api.example.com login me password fFn0B0ZI20W1swBN8nyKP4dW", "fFn0B0ZI20W1swBN8nyKP4dW"),
    (
        "aws session token",
        "export AWS_SESSION_TOKEN=EAG46K9aWTvr376teNBf/JdtVpQYRneJCbiDF9naag95l6cGis2+tcUZLRC9SCgsyo4c6aFr",
        "EAG46K9aWTvr376teNBf/JdtVpQYRneJCbiDF9naag95l6cGis2+tcUZLRC9SCgsyo4c6aFr",
    ),
    ("mysql pwd", "MYSQL_PWD=Zq8vLm2Xr5Tn mysql -u app", "Zq8vLm2Xr5Tn"),
    (
        "azure storage",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Xk2mP9qR4sT7vW1yZ3bC5dF8gH0jK6nL;",
        "Xk2mP9qR4sT7vW1yZ3bC5dF8gH0jK6nL",
    ),
    (
        "pkcs8 private key",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    ),
]

# text that must come out unchanged
NEAR_MISSES: list[tuple[str, str]] = [
    ("git sha", "fixed in 9fceb02d0ae598e95dc970b74767f19372d61af8 and e83c5163316f89bfbde7d9ab23ca2e25604af290"),
    ("short sha", "see commit 9fceb02 on main"),
    ("sha256", "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"),
    ("uuid", "session 3f2a9c1e-5b7d-4e21-9a6b-0c8d7e6f5a41 ended"),
    ("base64 of text", "payload " + base64.b64encode(b"Hello world, this is ordinary text for a test.").decode()),
    ("node env", "NODE_ENV=production\nPORT=8080\nLOG_LEVEL=debug"),
    ("commit var", "export COMMIT=9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("token settings", "TOKEN_TTL=3600\nAUTH_URL=https://auth.example.com/login\nPASSWORD_FILE=/run/secrets/db"),
    ("references", "export GITHUB_TOKEN=$GH_TOKEN\nAPI_KEY=${API_KEY}\npassword: <your password>"),
    ("primary key", "PRIMARY_KEY=id"),
    ("prose about tokens", "We rotate the token every day and never log passwords."),
    ("url without password", "https://github.com/owner/repo and git@github.com:owner/repo.git"),
    ("url with user only", "ssh://git@gitlab.com:22/group/project.git"),
    ("sk prefix words", "the sk-learn package and task-ant-colony are fine"),
    ("stripe publishable", "pk_live_51HqLyjWDarjtT1zdp7dcXYZabc123 is public by design"),
    ("author", "AUTHOR=Jane Doe"),
    ("bearer word", "the bearer of bad news"),
    ("ulid", "record 01JD3W4X5Y6Z7A8B9C0D1E2F3G superseded"),
    ("public key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"),
    ("mysql without password", "mysql -u root -h db.internal -P 3306 app_db"),
    ("curl user without password", "curl -u admin https://example.com"),
    ("jwt-like prose", "eyJ is how base64 JSON starts"),
    # -- look-alikes around the rules added for issue 13
    ("secret sauce", "the secret sauce is caching; the token bucket refills 100 tokens per second"),
    ("key value", "key: value pairs in YAML, and the api key rotation doc lives in docs/security/api-keys.md"),
    ("password reset route", "password reset flow: POST /api/v1/password/reset sends a mail"),
    ("cache key", "export KEY_PREFIX=app_ and CACHE_KEY=users:list"),
    ("docker stdin", "docker login registry.example.com -u deploy --password-stdin"),
    ("url with user", "https://user@example.com/path and postgres://localhost:5432/app"),
    ("email", "mail dev@example.com: the build is green"),
    ("token after sha", "the token refresh fix landed in 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("ulid after token", "token request 01JD3W4X5Y6Z7A8B9C0D1E2F3G failed once"),
    ("secret name", "secret_name: prod/db/password"),
    ("api version", "api_version: 2024-06-01"),
    ("password rules", "the password must be at least 12 characters long"),
    ("vault path", "vault kv get secret/data/app and s.substring(0, 24)"),
    ("password prompt", "mysql -u root -p app_db asks for the password"),
    ("env reference", "password: ${{ secrets.DB_PASSWORD }}"),
    (
        "public key on one line",
        "-----BEGIN PUBLIC KEY----- MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE -----END PUBLIC KEY-----",
    ),
    (
        "ssh public key",
        "the deploy key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ci@host",
    ),
]

package uploads

import "testing"

func TestSecretName(t *testing.T) {
	t.Parallel()
	secret := []string{"GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "AWS_SECRET_ACCESS_KEY", "api_key", "apiKey", "DB_PASSWORD",
		"SSH_PASSPHRASE", "GOOGLE_APPLICATION_CREDENTIALS", "NPM_AUTH", "SESSION_COOKIE", "PRIVATE_REPO_URL", "MYSQL_PASSWD"}
	plain := []string{"GITHUB_SHA", "GITHUB_REPOSITORY", "GITHUB_REF_NAME", "RUNNER_OS", "PWD", "GITHUB_EVENT_PATH", "CI", "HOME"}
	for _, n := range secret {
		if !secretName(n) {
			t.Errorf("%s is a secret name", n)
		}
	}
	for _, n := range plain {
		if secretName(n) {
			t.Errorf("%s is not a secret name", n)
		}
	}
}

func TestSecretValue(t *testing.T) {
	t.Parallel()
	secret := []string{
		"ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
		"AKIAIOSFODNN7EXAMPLE", "xoxb-1234567890-abcdefghij", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE", "https://user:pw@host.example/x", "https://ghs_token@github.com/a/b",
		"Bearer ghs_aBcDeFgHiJkLmNoPqRsTuVwX",
	}
	plain := []string{"https://github.com/acme/app", "main", "4c0f1e5b9a7d3e2f1a0b9c8d7e6f5a4b3c2d1e0f", "refs/heads/ghp_branch",
		"eyJ-not-a-jwt", "mailto:a@b.example", "AKIA"}
	for _, v := range secret {
		if !secretValue(v) {
			t.Errorf("%q is a secret value", v)
		}
	}
	for _, v := range plain {
		if secretValue(v) {
			t.Errorf("%q is not a secret value", v)
		}
	}
}

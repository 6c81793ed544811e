package schema

import "github.com/acme/codescan-api/shared/store/ddb"

// Upload categories (store/findings lifecycle.go). A scan is the truth
// for its tool and category on its branch: each (tool, category) has a
// head item of its own. The empty category's head is HeadKey, exactly the
// key of the time before categories; another category's head sorts right
// after it (HeadKey's sort key, "#", the category's hash), so one query
// of HeadKey's sort key as a prefix reads every category's head of a tool
// on a branch, and nothing else (the hashes are fixed-width).

// CategoryHeadKey is the head item of one tool and category on one
// branch of a project; "" is HeadKey.
func CategoryHeadKey(companyID, projectID int64, branch, tool, category string) ddb.Key {
	k := HeadKey(companyID, projectID, branch, tool)
	if category != "" {
		k.SK += "#" + ShortHash(category, 16)
	}
	return k
}

module example.com/calls

go 1.22

require (
	github.com/tidwall/gjson v1.6.0
	golang.org/x/text v0.3.5
)

require (
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tidwall/match v1.0.1 // indirect
	github.com/tidwall/pretty v1.0.0 // indirect
)

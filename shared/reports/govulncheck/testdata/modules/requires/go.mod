module example.com/requires

go 1.22

require golang.org/x/text v0.3.5

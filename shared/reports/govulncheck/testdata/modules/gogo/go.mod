module example.com/gogo

go 1.22

require github.com/gogo/protobuf v1.3.1

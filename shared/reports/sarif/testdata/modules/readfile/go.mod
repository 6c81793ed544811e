module example.com/readfile

go 1.24

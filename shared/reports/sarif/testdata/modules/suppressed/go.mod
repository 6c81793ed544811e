module example.com/suppressed

go 1.22

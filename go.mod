module github.com/hone-tune/hone

go 1.26.8

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/term v0.48.0
	gopkg.in/yaml.v3 v3.0.1
	pgregory.net/rapid v1.3.0
)

require (
	github.com/kr/text v0.2.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

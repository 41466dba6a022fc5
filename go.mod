module gateway

go 1.26.8

require (
	github.com/coder/websocket v1.8.15
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.50.0
)

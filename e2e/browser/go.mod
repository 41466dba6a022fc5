module github.com/openhal/gateway/e2e/browser

go 1.25.0

require (
	github.com/chromedp/cdproto v0.160.1
	github.com/chromedp/chromedp v0.23.1
	github.com/openhal/gateway v0.0.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

replace github.com/openhal/gateway => ../..

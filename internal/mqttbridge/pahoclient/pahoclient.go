// Package pahoclient is mqttbridge.Client over paho.golang's autopaho
// (MQTT 5): it connects, reconnects with an exponential backoff bounded
// by 30 s, sets the gateway's will, subscribes with retain handling 2,
// and turns paho's callbacks and errors into mqttbridge.Handler calls and
// mqttbridge's error types. paho.golang is pre-1.0 and changes its API:
// it is used here and nowhere else.
package pahoclient

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/openhal/gateway/internal/mqttbridge"
)

// Backoff bounds: the first retry within a second, then doubling up to
// MaxBackoff, so that a broker back from a restart is found soon and a
// broker down for long is not hammered.
const (
	MinBackoff = 250 * time.Millisecond
	MaxBackoff = 30 * time.Second
	keepAlive  = 30 // seconds; the broker fires the will 1.5 keepalives after a silent death
)

// Client is a connection to the broker that keeps itself up.
type Client struct {
	cm  *autopaho.ConnectionManager
	qos byte

	mu      sync.Mutex
	lastErr error // what ended the connection that is up, as paho reported it
}

// Dial starts connecting to cfg's broker and returns at once; h is told
// of each connection, each failure and each message. The will is
// <base>/status "offline", retained. Close ends it.
func Dial(ctx context.Context, cfg mqttbridge.Config, h mqttbridge.Handler) (*Client, error) {
	c := &Client{qos: cfg.QoS}
	pc := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{cfg.Broker},
		TlsCfg:                        cfg.TLS,
		KeepAlive:                     keepAlive,
		CleanStartOnInitialConnection: true,
		SessionExpiryInterval:         0,
		ReconnectBackoff:              autopaho.NewExponentialBackoff(MinBackoff, MaxBackoff, time.Second, 2),
		ConnectTimeout:                10 * time.Second,
		ConnectUsername:               cfg.Username,
		ConnectPassword:               cfg.Password,
		WillMessage:                   &paho.WillMessage{Topic: cfg.Topics().Status(cfg.Gateway), Payload: []byte("offline"), QoS: cfg.QoS, Retain: true},
		OnConnectionUp: func(*autopaho.ConnectionManager, *paho.Connack) {
			c.setErr(nil)
			h.Connected()
		},
		OnConnectionDown: func() bool {
			h.Disconnected(fmt.Errorf("%w: %w", mqttbridge.ErrConnectionLost, c.takeErr()))
			return true
		},
		OnConnectError: func(err error) { h.Disconnected(connectError(err)) },
		ClientConfig: paho.ClientConfig{
			ClientID: cfg.ClientID,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				h.Received(mqttbridge.Message{Topic: pr.Packet.Topic, Payload: pr.Packet.Payload, Retain: pr.Packet.Retain})
				return true, nil
			}},
			OnClientError: func(err error) { c.setErr(err) },
			OnServerDisconnect: func(d *paho.Disconnect) {
				reason := ""
				if d.Properties != nil {
					reason = d.Properties.ReasonString
				}
				c.setErr(&mqttbridge.RefusedError{Code: d.ReasonCode, Reason: reason, Disconnect: true})
			},
		},
	}
	if cfg.Username != "" || len(cfg.Password) > 0 {
		pc.ConnectUsername, pc.ConnectPassword = cfg.Username, cfg.Password
	}
	cm, err := autopaho.NewConnection(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("mqtt client for %s: %w", cfg.BrokerName(), err)
	}
	c.cm = cm
	return c, nil
}

func (c *Client) setErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil || c.lastErr == nil {
		c.lastErr = err
	}
}

func (c *Client) takeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.lastErr
	c.lastErr = nil
	if err == nil {
		err = errors.New("closed")
	}
	return err
}

// connectError turns a failed attempt into mqttbridge's words: a CONNACK
// refusal becomes a RefusedError with its reason code.
func connectError(err error) error {
	var ce *autopaho.ConnackError
	if errors.As(err, &ce) {
		return &mqttbridge.RefusedError{Code: ce.ReasonCode, Reason: ce.Reason}
	}
	return err
}

// Publish sends one message at the configured QoS and waits for its
// acknowledgement.
func (c *Client) Publish(ctx context.Context, topic string, payload []byte, retain bool) error {
	_, err := c.cm.Publish(ctx, &paho.Publish{Topic: topic, Payload: payload, Retain: retain, QoS: c.qos})
	if errors.Is(err, autopaho.ConnectionDownError) {
		return mqttbridge.ErrDisconnected
	}
	if err != nil {
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	return nil
}

// Subscribe subscribes with retain handling 2 (no retained message is sent
// on subscribe) and retain-as-published, so that a command published with
// the retain flag arrives with it and the bridge can drop it.
func (c *Client) Subscribe(ctx context.Context, filters ...string) error {
	s := &paho.Subscribe{}
	for _, f := range filters {
		s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: c.qos, RetainHandling: 2, RetainAsPublished: true})
	}
	if _, err := c.cm.Subscribe(ctx, s); err != nil {
		if errors.Is(err, autopaho.ConnectionDownError) {
			return mqttbridge.ErrDisconnected
		}
		return fmt.Errorf("subscribe %v: %w", filters, err)
	}
	return nil
}

// Close disconnects cleanly (the broker does not send the will) and stops
// reconnecting.
func (c *Client) Close(ctx context.Context) error {
	if err := c.cm.Disconnect(ctx); err != nil {
		return fmt.Errorf("mqtt disconnect: %w", err)
	}
	return nil
}

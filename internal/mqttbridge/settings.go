package mqttbridge

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"

	"github.com/openhal/gateway/internal/homeassistant"
)

// SettingsPath is where the settings live in the gateway's configuration:
// every error names its field under it, so that the operator finds the line.
const SettingsPath = "adapters.settings.mqtt"

// Settings are the adapter's settings as the configuration gives them
// (adapters.settings.mqtt), decoded strictly.
type Settings struct {
	Broker          string      `json:"broker"`
	Username        string      `json:"username"`
	Password        string      `json:"password"`
	PasswordFile    string      `json:"passwordFile"`
	TLS             TLSSettings `json:"tls"`
	ClientID        string      `json:"clientId"`
	Gateway         string      `json:"gateway"`
	Name            string      `json:"name"`
	Prefix          *string     `json:"prefix"`
	DiscoveryPrefix *string     `json:"discoveryPrefix"`
	QoS             *int        `json:"qos"`
}

// TLSSettings are the files of an mqtts:// connection.
type TLSSettings struct {
	CA   string `json:"ca"`
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

// Config is Settings checked and completed with their defaults: what the
// bridge and its client run with.
type Config struct {
	Broker          *url.URL // mqtt://host:port or mqtts://host:port, port always set
	Username        string
	Password        []byte
	TLS             *tls.Config // nil for mqtt://
	ClientID        string
	Gateway         string // the slug in topics
	Name            string // the gateway's name in Home Assistant
	Prefix          string
	DiscoveryPrefix string // "" turns Home Assistant discovery off
	QoS             byte
}

// BrokerName is the broker as the mqtt.broker device and the log name
// it: scheme, host and port, never a password.
func (c Config) BrokerName() string { return c.Broker.Scheme + "://" + c.Broker.Host }

// Topics is the topic layout of this configuration (package
// homeassistant names every topic). With discovery off, Discovery is ""
// and the bridge neither publishes configs nor subscribes to Home
// Assistant's status.
func (c Config) Topics() homeassistant.Topics {
	return homeassistant.Topics{Prefix: c.Prefix, Discovery: c.DiscoveryPrefix}
}

var (
	settingsFields = fieldSet(Settings{})
	tlsFields      = fieldSet(TLSSettings{})
	prefixRe       = regexp.MustCompile(`^[^#+/\x00]+(/[^#+/\x00]+)*$`)
)

// ParseSettings decodes and checks the settings (raw is the JSON object
// the gateway hands over in initialize; nil when the configuration has
// none) and fills the defaults; hostname gives the default gateway id.
// Files (password, CA, certificate) are read here, so that a bad one stops
// the adapter at start with the field's name rather than at each
// connection attempt.
func ParseSettings(raw json.RawMessage, hostname func() (string, error)) (Config, error) {
	var s Settings
	if err := decodeStrict(raw, &s); err != nil {
		return Config{}, err
	}
	return s.config(hostname)
}

func (s Settings) config(hostname func() (string, error)) (Config, error) {
	var c Config
	var err error
	if c.Broker, err = parseBroker(s.Broker); err != nil {
		return Config{}, err
	}
	if c.Gateway, err = gatewayID(s.Gateway, hostname); err != nil {
		return Config{}, err
	}
	c.Username, c.Name, c.ClientID = s.Username, s.Name, s.ClientID
	if c.Name == "" {
		c.Name = c.Gateway
	}
	if c.ClientID == "" {
		c.ClientID = "openhal-" + c.Gateway
	}
	if c.Password, err = s.password(); err != nil {
		return Config{}, err
	}
	if c.Prefix, err = topicPrefix("prefix", s.Prefix, "openhal", false); err != nil {
		return Config{}, err
	}
	if c.DiscoveryPrefix, err = topicPrefix("discoveryPrefix", s.DiscoveryPrefix, "homeassistant", true); err != nil {
		return Config{}, err
	}
	c.QoS = 1
	if s.QoS != nil {
		if *s.QoS != 0 && *s.QoS != 1 {
			return Config{}, fieldErr("qos", "want 0 or 1, got %d", *s.QoS)
		}
		c.QoS = byte(*s.QoS)
	}
	if c.TLS, err = s.TLS.config(c.Broker); err != nil {
		return Config{}, err
	}
	return c, nil
}

func parseBroker(s string) (*url.URL, error) {
	if s == "" {
		return nil, fieldErr("broker", "required: the broker's URL, e.g. mqtt://127.0.0.1:1883 or mqtts://broker.lan:8883")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fieldErr("broker", "not a URL: %v", err)
	}
	port := map[string]string{"mqtt": "1883", "mqtts": "8883"}[u.Scheme]
	switch {
	case port == "":
		return nil, fieldErr("broker", "scheme %q: want mqtt:// or mqtts:// (TLS)", u.Scheme)
	case u.User != nil:
		return nil, fieldErr("broker", "has a user name in it: put it in %s.username and the password in password or passwordFile", SettingsPath)
	case u.Hostname() == "":
		return nil, fieldErr("broker", "%q has no host", s)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, fieldErr("broker", "%q: want scheme://host:port and nothing after it", s)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

func gatewayID(s string, hostname func() (string, error)) (string, error) {
	if s != "" {
		if !homeassistant.ValidID(s) {
			return "", fieldErr("gateway", "%q: want lower case letters, digits and - (at most 64; no _, which would make Home Assistant's unique ids ambiguous across gateways)", s)
		}
		return s, nil
	}
	h, err := hostname()
	if err != nil {
		return "", fieldErr("gateway", "not set, and the host name is unknown (%v): set it", err)
	}
	return homeassistant.Slug(h), nil
}

func (s Settings) password() ([]byte, error) {
	switch {
	case s.Password != "" && s.PasswordFile != "":
		return nil, fieldErr("passwordFile", "password and passwordFile are both set: keep one")
	case s.PasswordFile != "":
		b, err := os.ReadFile(s.PasswordFile)
		if err != nil {
			return nil, fieldErr("passwordFile", "%v (the adapter runs as adapters.user, which must be able to read it)", err)
		}
		return bytes.TrimRight(b, "\r\n"), nil
	case s.Password != "":
		return []byte(s.Password), nil
	}
	return nil, nil
}

func topicPrefix(field string, v *string, def string, mayBeEmpty bool) (string, error) {
	if v == nil {
		return def, nil
	}
	switch {
	case *v == "" && mayBeEmpty:
		return "", nil
	case !prefixRe.MatchString(*v):
		return "", fieldErr(field, "%q: want a topic without +, # or empty levels", *v)
	}
	return *v, nil
}

func (t TLSSettings) config(broker *url.URL) (*tls.Config, error) {
	if broker.Scheme != "mqtts" {
		if t != (TLSSettings{}) {
			return nil, fieldErr("tls", "set, but the broker is %s: use mqtts:// for TLS", broker.Scheme+"://")
		}
		return nil, nil
	}
	c := &tls.Config{ServerName: broker.Hostname(), MinVersion: tls.VersionTLS12}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fieldErr("tls.ca", "%v", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fieldErr("tls.ca", "%s holds no PEM certificate", t.CA)
		}
	}
	if (t.Cert == "") != (t.Key == "") {
		return nil, fieldErr("tls.cert", "tls.cert and tls.key go together: give both or neither")
	}
	if t.Cert != "" {
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fieldErr("tls.cert", "client certificate and key: %v", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// decodeStrict decodes raw into v, refusing unknown fields at any level
// with the field's full path (json's own error does not name the level).
func decodeStrict(raw json.RawMessage, v *Settings) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("%s: want a mapping: %w", SettingsPath, err)
	}
	if err := unknownFields("", top, settingsFields); err != nil {
		return err
	}
	if t, ok := top["tls"]; ok && !bytes.Equal(bytes.TrimSpace(t), []byte("null")) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(t, &m); err != nil {
			return fieldErr("tls", "want a mapping {ca, cert, key}")
		}
		if err := unknownFields("tls.", m, tlsFields); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fieldErr(te.Field, "want %s, got %s", typeWords[te.Type.Kind().String()], te.Value)
		}
		return fmt.Errorf("%s: %w", SettingsPath, err)
	}
	return nil
}

// typeWords names the settings' Go types as a YAML writer sees them.
var typeWords = map[string]string{"int": "a number", "string": "a string", "struct": "a mapping", "ptr": "a value"}

func unknownFields(path string, m map[string]json.RawMessage, known map[string]bool) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return fieldErr(path+k, "unknown field")
		}
	}
	return nil
}

// fieldSet is the JSON names of a struct's fields.
func fieldSet(v any) map[string]bool {
	b, _ := json.Marshal(v)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("%s.%s: %s", SettingsPath, field, fmt.Sprintf(format, args...))
}

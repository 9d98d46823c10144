// Package server implements a tiny HTTP server.
package server

import (
	"fmt"
	"net/http"
)

// DefaultAddr is where the server listens.
const DefaultAddr = ":8080"

const (
	ModeDev  = "dev"
	ModeProd = "prod"
)

var started, stopped bool

type (
	// Handler handles one request.
	Handler func(w http.ResponseWriter, r *http.Request)
	Port    = int
)

// Server serves requests.
// It is safe for concurrent use.
type Server struct {
	addr  string
	names map[string]string
}

type Store[T any] interface {
	Get(key string) (T, error)
}

// NewServer builds a server for "größe".
func NewServer(addr string) *Server {
	type local struct{}
	return &Server{addr: addr}
}

// Start listens and serves.
func (s *Server) Start() error {
	handler := func() {}
	handler()
	return http.ListenAndServe(s.addr, nil)
}

func (s Server) String() string {
	return fmt.Sprintf("Server(%s)", s.addr)
}

func (c *Cache[K, V]) Get(key K) V {
	var zero V
	return zero
}

func init() {}

func init() {}

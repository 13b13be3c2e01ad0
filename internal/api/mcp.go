package api

import "net/http"

// mcpServer serves POST /mcp.
type mcpServer struct{ s *Server }

func newMCPServer(s *Server) *mcpServer { return &mcpServer{s: s} }

func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) {
	writeError(w, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "MCP is being built"})
}

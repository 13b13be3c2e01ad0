package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// The MCP registries are open: the speak tool registers itself here, and the plan service
// adds its tools, resources and prompts at wiring time. Lists keep registration order, and
// their encoded results are computed once per registry change, because tools/list and its
// siblings are the hottest calls a host makes.

// Resource is a resource with a fixed URI.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	// Read returns the contents; an error wrapping ErrResourceNotFound becomes the
	// protocol's not-found error, an *Error with a 4xx status invalid params.
	Read func(ctx context.Context, caller Caller, uri string) ([]ResourceContents, error)
}

// ResourceTemplate is a family of resources named by an RFC 6570 level-1 template such as
// "werkbaum://plan/{key}". Each variable matches a non-empty run of characters without "/".
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MimeType    string
	// Read receives the URI and its variables; errors as for Resource.Read.
	Read func(ctx context.Context, caller Caller, uri string, vars map[string]string) ([]ResourceContents, error)
}

// ResourceContents is the text of one resource.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text"`
}

// ErrResourceNotFound marks a resources/read of a URI that names nothing (readable).
var ErrResourceNotFound = errors.New("resource not found")

// Prompt is a text-only prompt template.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	// Get receives the arguments, required ones already checked to be present. An *Error
	// with a 4xx status becomes invalid params; other errors an internal error.
	Get func(ctx context.Context, caller Caller, args map[string]string) (PromptResult, error)
}

// PromptArgument describes one prompt argument.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptResult is the answer of prompts/get.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a prompt ("user" or "assistant").
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// registry holds what the MCP door offers. Registration happens at wiring time and is
// rare; reads happen on every request, so encoded lists are cached until the next change.
type registry struct {
	mu        sync.RWMutex
	tools     []tool
	toolIdx   map[string]int
	resources []Resource
	templates []ResourceTemplate
	prompts   []Prompt
	promptIdx map[string]int
	lists     *encodedLists // nil after a change
}

// encodedLists are the list results, encoded once per registry state.
type encodedLists struct {
	tools, resources, templates, prompts []byte
}

// addTool adds a tool to tools/list and tools/call. It panics on an empty or duplicate
// name or a missing call: both are wiring mistakes that must not reach a host. Tools come
// only from AddTool, which derives their schemas from their types.
func (r *registry) addTool(t tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.Name == "" || t.call == nil {
		panic("api: AddTool needs a name and a Call")
	}
	if _, dup := r.toolIdx[t.Name]; dup {
		panic(fmt.Sprintf("api: tool %q registered twice", t.Name))
	}
	if r.toolIdx == nil {
		r.toolIdx = map[string]int{}
	}
	r.toolIdx[t.Name] = len(r.tools)
	r.tools = append(r.tools, t)
	r.lists = nil
}

// RegisterResource adds a fixed-URI resource to resources/list and resources/read. It
// panics on an empty or duplicate URI or a missing Read.
func (s *Server) RegisterResource(res Resource) {
	r := &s.mcp.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.URI == "" || res.Name == "" || res.Read == nil {
		panic("api: RegisterResource needs a URI, a name and a Read")
	}
	for _, o := range r.resources {
		if o.URI == res.URI {
			panic(fmt.Sprintf("api: resource %q registered twice", res.URI))
		}
	}
	r.resources = append(r.resources, res)
	r.lists = nil
}

// RegisterResourceTemplate adds a resource template to resources/templates/list; reads of
// matching URIs go to its Read. It panics on an invalid template or a missing Read.
func (s *Server) RegisterResourceTemplate(t ResourceTemplate) {
	r := &s.mcp.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.URITemplate == "" || t.Name == "" || t.Read == nil {
		panic("api: RegisterResourceTemplate needs a URI template, a name and a Read")
	}
	if !validTemplate(t.URITemplate) {
		panic(fmt.Sprintf("api: invalid URI template %q", t.URITemplate))
	}
	r.templates = append(r.templates, t)
	r.lists = nil
}

// RegisterPrompt adds a prompt to prompts/list and prompts/get. It panics on an empty or
// duplicate name or a missing Get.
func (s *Server) RegisterPrompt(p Prompt) {
	r := &s.mcp.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Name == "" || p.Get == nil {
		panic("api: RegisterPrompt needs a name and a Get")
	}
	if _, dup := r.promptIdx[p.Name]; dup {
		panic(fmt.Sprintf("api: prompt %q registered twice", p.Name))
	}
	if r.promptIdx == nil {
		r.promptIdx = map[string]int{}
	}
	r.promptIdx[p.Name] = len(r.prompts)
	r.prompts = append(r.prompts, p)
	r.lists = nil
}

func (r *registry) tool(name string) (tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.toolIdx[name]
	if !ok {
		return tool{}, false
	}
	return r.tools[i], true
}

func (r *registry) prompt(name string) (Prompt, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.promptIdx[name]
	if !ok {
		return Prompt{}, false
	}
	return r.prompts[i], true
}

// resolve finds what serves uri: a fixed resource first, then the first matching template.
func (r *registry) resolve(uri string) (read func(context.Context, Caller) ([]ResourceContents, error), ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, res := range r.resources {
		if res.URI == uri {
			return func(ctx context.Context, c Caller) ([]ResourceContents, error) { return res.Read(ctx, c, uri) }, true
		}
	}
	for _, t := range r.templates {
		if vars, ok := matchTemplate(t.URITemplate, uri); ok {
			return func(ctx context.Context, c Caller) ([]ResourceContents, error) { return t.Read(ctx, c, uri, vars) }, true
		}
	}
	return nil, false
}

// resourceEntries are the resources with a fixed URI, as resources/list names them.
func (r *registry) resourceEntries() []resourceEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]resourceEntry, 0, len(r.resources))
	for _, res := range r.resources {
		out = append(out, res.entry())
	}
	return out
}

// encoded returns the list results, encoding them when the registry changed.
func (r *registry) encoded() (*encodedLists, error) {
	r.mu.RLock()
	l := r.lists
	r.mu.RUnlock()
	if l != nil {
		return l, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lists != nil {
		return r.lists, nil
	}
	l, err := r.encodeLists()
	if err != nil {
		return nil, err
	}
	r.lists = l
	return l, nil
}

type toolEntry struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  any             `json:"inputSchema"`
	OutputSchema any             `json:"outputSchema,omitempty"`
	Annotations  ToolAnnotations `json:"annotations"`
}

type resourceEntry struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// entry is the resource as resources/list names it.
func (res Resource) entry() resourceEntry {
	return resourceEntry{res.URI, res.Name, res.Title, res.Description, res.MimeType}
}

type templateEntry struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

type promptEntry struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

func (r *registry) encodeLists() (*encodedLists, error) {
	tools := make([]toolEntry, 0, len(r.tools))
	for _, t := range r.tools {
		var out any // a nil map in an interface would be written as null
		if t.OutputSchema != nil {
			out = t.OutputSchema
		}
		tools = append(tools, toolEntry{t.Name, t.Title, t.Description, t.InputSchema, out, t.Annotations})
	}
	resources := make([]resourceEntry, 0, len(r.resources))
	for _, res := range r.resources {
		resources = append(resources, res.entry())
	}
	templates := make([]templateEntry, 0, len(r.templates))
	for _, t := range r.templates {
		templates = append(templates, templateEntry{t.URITemplate, t.Name, t.Title, t.Description, t.MimeType})
	}
	prompts := make([]promptEntry, 0, len(r.prompts))
	for _, p := range r.prompts {
		prompts = append(prompts, promptEntry{p.Name, p.Title, p.Description, p.Arguments})
	}
	var l encodedLists
	var err error
	if l.tools, err = json.Marshal(map[string]any{"tools": tools}); err != nil {
		return nil, fmt.Errorf("encoding tools/list: %w", err)
	}
	if l.resources, err = json.Marshal(map[string]any{"resources": resources}); err != nil {
		return nil, fmt.Errorf("encoding resources/list: %w", err)
	}
	if l.templates, err = json.Marshal(map[string]any{"resourceTemplates": templates}); err != nil {
		return nil, fmt.Errorf("encoding resources/templates/list: %w", err)
	}
	if l.prompts, err = json.Marshal(map[string]any{"prompts": prompts}); err != nil {
		return nil, fmt.Errorf("encoding prompts/list: %w", err)
	}
	l.tools, l.resources, l.templates, l.prompts = endResult(l.tools), endResult(l.resources), endResult(l.templates), endResult(l.prompts)
	return &l, nil
}

// validTemplate accepts literal text with non-empty, non-nested {name} variables, where no
// two variables touch (a variable must end at a literal).
func validTemplate(tmpl string) bool {
	prevVar := false
	for tmpl != "" {
		open := strings.IndexAny(tmpl, "{}")
		if open < 0 {
			return true
		}
		if tmpl[open] == '}' || (open == 0 && prevVar) {
			return false
		}
		end := strings.IndexAny(tmpl[open+1:], "{}")
		if end <= 0 || tmpl[open+1+end] != '}' {
			return false
		}
		tmpl = tmpl[open+1+end+1:]
		prevVar = true
	}
	return true
}

// matchTemplate matches uri against a level-1 URI template, returning the variables.
// Literal parts must match exactly; a variable takes a non-empty run up to the next
// literal part, never crossing "/".
func matchTemplate(tmpl, uri string) (map[string]string, bool) {
	vars := map[string]string{}
	for tmpl != "" {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			return vars, tmpl == uri
		}
		lit := tmpl[:open]
		if !strings.HasPrefix(uri, lit) {
			return nil, false
		}
		uri = uri[len(lit):]
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return nil, false
		}
		name := tmpl[open+1 : open+end]
		if name == "" {
			return nil, false
		}
		tmpl = tmpl[open+end+1:]
		next := tmpl
		if i := strings.IndexByte(next, '{'); i >= 0 {
			next = next[:i]
		}
		var val string
		if next == "" {
			val = uri
		} else {
			i := strings.Index(uri, next)
			if i < 0 {
				return nil, false
			}
			val = uri[:i]
		}
		if val == "" || strings.Contains(val, "/") {
			return nil, false
		}
		uri = uri[len(val):]
		dec, err := url.PathUnescape(val)
		if err != nil {
			return nil, false
		}
		vars[name] = dec
	}
	return vars, uri == ""
}

package cindertest

import (
	"net/http"
)

// attachment serves the v3 attachments API (>= 3.27).
func (s *Server) attachment(w http.ResponseWriter, r *http.Request, op, mv string, body map[string]any) {
	switch op {
	case "attachment-create":
		s.attachmentCreate(w, mv, body)
	case "attachment-list":
		s.attachmentList(w, r)
	case "attachment-complete":
		if !mvAtLeast(mv, 44) {
			writeErr(w, 404, "itemNotFound", "The resource could not be found.")
			return
		}
		s.withAttachment(w, attActRE.FindStringSubmatch(r.URL.Path)[1], func(v *Volume, a *Attachment) {
			a.Status = "attached"
			v.Status = "in-use"
			w.WriteHeader(204)
		})
	case "attachment-update":
		s.withAttachment(w, attRE.FindStringSubmatch(r.URL.Path)[1], func(v *Volume, a *Attachment) {
			s.attachmentUpdate(w, v, a, body)
		})
	case "attachment-delete":
		s.withAttachment(w, attRE.FindStringSubmatch(r.URL.Path)[1], func(v *Volume, a *Attachment) {
			v.Attachments = keep(v.Attachments, func(x *Attachment) bool { return x != a })
			if len(v.Attachments) == 0 {
				v.Status = "available"
			}
			writeJSON(w, 200, map[string]any{"attachments": []any{}})
		})
	case "attachment-show":
		s.withAttachment(w, attRE.FindStringSubmatch(r.URL.Path)[1], func(v *Volume, a *Attachment) {
			writeJSON(w, 200, map[string]any{"attachment": s.attachmentView(v, a)})
		})
	}
}

// withAttachment runs f on the attachment with this ID, or answers 404.
func (s *Server) withAttachment(w http.ResponseWriter, id string, f func(*Volume, *Attachment)) {
	for _, v := range s.volumes {
		for _, a := range v.Attachments {
			if a.ID == id {
				f(v, a)
				return
			}
		}
	}
	writeErr(w, 404, "itemNotFound", "Volume attachment could not be found with filter: attachment_id = "+id+".")
}

func (s *Server) attachmentCreate(w http.ResponseWriter, mv string, body map[string]any) {
	a, _ := body["attachment"].(map[string]any)
	if _, ok := a["instance_uuid"]; ok && a["instance_uuid"] == nil {
		writeErr(w, 400, "badRequest", "Invalid input for field/attribute instance_uuid. Value: None. None is not of type 'string'")
		return
	}
	if _, ok := a["mode"]; ok && !mvAtLeast(mv, 54) {
		writeErr(w, 400, "badRequest", "Invalid input for field/attribute attachment. Additional properties are not allowed ('mode' was unexpected)")
		return
	}
	v := s.volumes[str(a["volume_uuid"])]
	if v == nil {
		writeErr(w, 404, "itemNotFound", "Volume could not be found.")
		return
	}
	if v.Status != "available" {
		writeErr(w, 400, "badRequest", "Invalid volume: Volume "+v.ID+" status must be available or downloading")
		return
	}
	att := &Attachment{ID: s.newID(), Status: "reserved", Mode: str(a["mode"])}
	v.Attachments = append(v.Attachments, att)
	v.Status = "reserved"
	if conn, ok := a["connector"].(map[string]any); ok {
		att.Connector, att.Exported, att.Status, att.Host = conn, true, "attaching", str(conn["host"])
		v.Status = "attaching"
	}
	writeJSON(w, 200, map[string]any{"attachment": s.attachmentView(v, att)})
}

func (s *Server) attachmentUpdate(w http.ResponseWriter, v *Volume, att *Attachment, body map[string]any) {
	a, _ := body["attachment"].(map[string]any)
	conn, _ := a["connector"].(map[string]any)
	if conn["initiator"] == nil {
		// Cinder answers 500 here and leaves the volume reserved.
		writeErr(w, 500, "computeFault", "The server has either erred or is incapable of performing the requested operation.")
		return
	}
	att.Connector, att.Exported, att.Status, att.Host = conn, true, "attaching", str(conn["host"])
	att.Mountpoint = str(conn["mountpoint"])
	v.Status = "attaching"
	writeJSON(w, 200, map[string]any{"attachment": s.attachmentView(v, att)})
}

func (s *Server) attachmentList(w http.ResponseWriter, r *http.Request) {
	volumeID := r.URL.Query().Get("volume_id")
	var out []map[string]any
	for _, v := range s.volumes {
		if volumeID != "" && v.ID != volumeID {
			continue
		}
		for _, a := range v.Attachments {
			out = append(out, s.attachmentView(v, a))
		}
	}
	s.writeList(w, r, "attachments", out)
}

func (s *Server) attachmentView(v *Volume, a *Attachment) map[string]any {
	var ci any
	if a.Exported {
		m := s.ConnectionInfo(v.ID, a.Connector)
		m["attachment_id"] = a.ID
		ci = m
	}
	return map[string]any{"id": a.ID, "status": a.Status, "instance": nil, "volume_id": v.ID,
		"attached_at": "", "detached_at": "", "attach_mode": a.Mode, "connection_info": ci}
}

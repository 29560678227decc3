package cinderapi

import "github.com/gophercloud/gophercloud/v2"

func volumesURL(c *gophercloud.ServiceClient) string { return c.ServiceURL("volumes") }

func volumeURL(c *gophercloud.ServiceClient, id string) string {
	return c.ServiceURL("volumes", id)
}

func volumeActionURL(c *gophercloud.ServiceClient, id string) string {
	return c.ServiceURL("volumes", id, "action")
}

func attachmentsURL(c *gophercloud.ServiceClient) string { return c.ServiceURL("attachments") }

func attachmentsDetailURL(c *gophercloud.ServiceClient) string {
	return c.ServiceURL("attachments", "detail")
}

func attachmentURL(c *gophercloud.ServiceClient, id string) string {
	return c.ServiceURL("attachments", id)
}

func attachmentActionURL(c *gophercloud.ServiceClient, id string) string {
	return c.ServiceURL("attachments", id, "action")
}

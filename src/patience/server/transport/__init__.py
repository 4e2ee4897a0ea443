"""The websocket transport: connections in, messages to the services, their answers out."""

package mail

// RouteTo makes s dial addr instead of Config.Host:Port, so a test can play a remote SMTP
// server on loopback while s believes it talks to a non-loopback host.
func RouteTo(s *Sender, addr string) { s.dialAddr = addr }

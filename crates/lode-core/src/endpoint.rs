//! Which network endpoints a user-configured model server may be.
//!
//! Only `http` and `https`; a host that resolves to a private, link-local,
//! unique-local, shared (CGNAT) or cloud-metadata address is refused unless
//! the user config allows it, so that a config cannot turn lode into a probe
//! of the local network. Loopback is allowed (a local model server).

use std::net::{IpAddr, ToSocketAddrs};

/// Whether an address is one a remote model server has no business at.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_private()
                || v4.is_link_local() // 169.254/16, cloud metadata included
                || v4.is_unspecified()
                || v4.is_broadcast()
                || (o[0] == 100 && (64..128).contains(&o[1])) // 100.64/10, shared address space
        }
        IpAddr::V6(v6) => {
            let seg = v6.segments();
            // NAT64's local-use prefix translates to any IPv4 address the
            // operator chooses: nothing says which.
            if seg[..3] == [0x64, 0xff9b, 1] {
                return true;
            }
            if embedded_ipv4(v6)
                .iter()
                .any(|v4| !v4.is_loopback() && is_private(IpAddr::V4(*v4)))
            {
                return true;
            }
            v6.is_unspecified()
                || (seg[0] & 0xfe00) == 0xfc00 // fc00::/7 unique local (fd00:ec2::254 metadata)
                || (seg[0] & 0xffc0) == 0xfe80 // fe80::/10 link-local
        }
    }
}

/// The IPv4 addresses an IPv6 address carries by a standard embedding:
/// IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible (`::a.b.c.d`), NAT64's
/// well-known prefix (`64:ff9b::/96`), 6to4 (`2002:AABB:CCDD::/48`) and
/// Teredo (`2001:0::/32`: the server, and the client stored inverted).
fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Vec<std::net::Ipv4Addr> {
    use std::net::Ipv4Addr;
    let seg = v6.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let mut out = Vec::new();
    if let Some(mapped) = v6.to_ipv4_mapped() {
        out.push(mapped);
    }
    if seg[..6] == [0; 6] && !v6.is_unspecified() && !v6.is_loopback() {
        out.push(v4(seg[6], seg[7])); // IPv4-compatible
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        out.push(v4(seg[6], seg[7]));
    }
    if seg[0] == 0x2002 {
        out.push(v4(seg[1], seg[2]));
    }
    if seg[..2] == [0x2001, 0] {
        out.push(v4(seg[2], seg[3]));
        out.push(v4(!seg[6], !seg[7]));
    }
    out
}

/// Checks `url` (scheme, host, and every address the host resolves to).
/// The error is one line naming the host and the address.
pub fn check_endpoint(url: &str, allow_private: bool) -> Result<(), String> {
    let (host, port) = host_port(url)?;
    if allow_private {
        return Ok(());
    }
    let addrs = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| format!("{url}: cannot resolve {host}: {e}"))?;
    for a in addrs {
        let ip = a.ip();
        if !ip.is_loopback() && is_private(ip) {
            return Err(format!(
                "{url}: {host} resolves to the private or link-local address {ip}; \
                 set allow_private_endpoints = true in the user config to allow it"
            ));
        }
    }
    Ok(())
}

/// The host and port of an `http(s)` URL (the scheme's port when none is given).
pub fn host_port(url: &str) -> Result<(String, u16), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("{url}: not an http(s) URL"))?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(format!("{url}: the endpoint must be an http or https URL")),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("{url}: bad IPv6 host"))?;
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
        (h.to_string(), port.unwrap_or(default_port))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse().map_err(|_| format!("{url}: bad port {p:?}"))?,
            ),
            None => (authority.to_string(), default_port),
        }
    };
    if host.is_empty() {
        return Err(format!("{url}: no host"));
    }
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_link_local_and_metadata_hosts_are_refused() {
        for url in [
            "http://10.0.0.5:8080",
            "http://192.168.1.1/v1",
            "https://172.16.3.4",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1",
            "http://[fd00:ec2::254]/",
            "http://[fe80::1]:80",
            "http://0.0.0.0:9000",
        ] {
            let e = check_endpoint(url, false).expect_err(url);
            assert!(e.contains("allow_private_endpoints"), "{e}");
            assert!(check_endpoint(url, true).is_ok(), "{url}");
        }
    }

    #[test]
    fn private_and_metadata_ipv4_embedded_in_ipv6_are_refused() {
        for url in [
            "http://[64:ff9b::a9fe:a9fe]", // NAT64 well-known prefix: 169.254.169.254
            "http://[64:ff9b:1::a9fe:a9fe]/", // NAT64 local-use prefix
            "http://[2002:a9fe:a9fe::1]",  // 6to4 of 169.254.169.254
            "http://[2002:0a00:0005::]:8080", // 6to4 of 10.0.0.5
            "http://[::a9fe:a9fe]",        // IPv4-compatible
            "http://[::ffff:a9fe:a9fe]",   // IPv4-mapped
            "http://[2001:0:4136:e378:8000:63bf:5601:5656]", // Teredo: client 169.254.169.169 (inverted)
        ] {
            let e = check_endpoint(url, false).expect_err(url);
            assert!(e.contains("allow_private_endpoints"), "{url}: {e}");
        }
        // The same prefixes around a public address pass.
        for url in ["http://[64:ff9b::808:808]", "http://[2002:808:808::1]"] {
            assert!(check_endpoint(url, false).is_ok(), "{url}");
        }
    }

    #[test]
    fn loopback_and_public_addresses_pass() {
        assert!(check_endpoint("http://127.0.0.1:11434", false).is_ok());
        assert!(check_endpoint("http://[::1]:8080/v1", false).is_ok());
        assert!(check_endpoint("http://localhost:8080", false).is_ok());
        assert!(check_endpoint("https://8.8.8.8/v1", false).is_ok());
    }

    #[test]
    fn other_schemes_and_bad_urls_are_refused() {
        assert!(
            check_endpoint("file:///etc/passwd", true)
                .unwrap_err()
                .contains("http or https")
        );
        assert!(check_endpoint("ftp://host", true).is_err());
        assert!(check_endpoint("no-scheme", true).is_err());
        assert!(
            check_endpoint("http://host:port", true)
                .unwrap_err()
                .contains("bad port")
        );
    }
}

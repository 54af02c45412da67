/*
 * Whether a service mesh's sidecar sits between a pod and its peers on a port:
 * Istio's, shaped as its injector shapes pods (an istio-init or
 * istio-validation init container running istio-iptables, an istio-proxy
 * container or native sidecar, the sidecar.istio.io/status annotation). Pure.
 */
#ifndef DISTENV_MESH_H
#define DISTENV_MESH_H

#include <cjson/cJSON.h>

#define MESH_IN  1 /* connections to the pod on the port go through the proxy */
#define MESH_OUT 2 /* connections from the pod to the port go through the proxy */

/*
 * Which of MESH_IN/MESH_OUT an Istio sidecar in pod (a Pod, or a template:
 * metadata + spec) applies to TCP port: istio-iptables' own arguments when
 * the init container carries them (-m mode, -b/-d inbound include/exclude,
 * -i outbound IP ranges, -o/-q outbound exclude/include ports), else the
 * traffic.sidecar.istio.io annotations with Istio's defaults (every port
 * but the proxy's own). 0 when the pod has no sidecar, interception is NONE,
 * or the port is excluded both ways. *who: the sidecar's container name.
 */
int mesh_redirects(const cJSON *pod, long port, const char **who);

/* Whether a port list ("*", "29500,29501", "15090, 15021") holds port. */
int mesh_port_listed(const char *list, long port);

#endif

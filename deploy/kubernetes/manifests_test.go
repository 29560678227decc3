// Package kubernetes holds brick's Kubernetes manifests (the CSI driver's
// deployment, docs/csi.md) and the test that keeps them valid: every
// document decodes strictly into the Kubernetes API's Go types, so a
// misspelt field fails the build, and the documents agree with each other
// (one driver name, one socket, every referenced account, secret and volume
// present).
package kubernetes

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// driverName is the CSI driver's name every manifest must use.
const driverName = "cinder.brick-storage.io"

// volumeSnapshotClass is snapshot.storage.k8s.io/v1's VolumeSnapshotClass
// (external-snapshotter's CRD; not in k8s.io/api), field for field.
type volumeSnapshotClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Driver            string            `json:"driver"`
	Parameters        map[string]string `json:"parameters,omitempty"`
	DeletionPolicy    string            `json:"deletionPolicy"`
}

// volumeSnapshot is snapshot.storage.k8s.io/v1's VolumeSnapshot, the parts
// a user writes.
type volumeSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		VolumeSnapshotClassName *string `json:"volumeSnapshotClassName,omitempty"`
		Source                  struct {
			PersistentVolumeClaimName *string `json:"persistentVolumeClaimName,omitempty"`
			VolumeSnapshotContentName *string `json:"volumeSnapshotContentName,omitempty"`
		} `json:"source"`
	} `json:"spec"`
}

// kinds maps apiVersion/kind to a new value of its Go type.
var kinds = map[string]func() any{
	"v1/ServiceAccount":        func() any { return &corev1.ServiceAccount{} },
	"v1/Secret":                func() any { return &corev1.Secret{} },
	"v1/PersistentVolumeClaim": func() any { return &corev1.PersistentVolumeClaim{} },
	"v1/Pod":                   func() any { return &corev1.Pod{} },
	"apps/v1/Deployment":       func() any { return &appsv1.Deployment{} },
	"apps/v1/DaemonSet":        func() any { return &appsv1.DaemonSet{} },
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} },
	"rbac.authorization.k8s.io/v1/Role":               func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding":        func() any { return &rbacv1.RoleBinding{} },
	"storage.k8s.io/v1/CSIDriver":                     func() any { return &storagev1.CSIDriver{} },
	"storage.k8s.io/v1/StorageClass":                  func() any { return &storagev1.StorageClass{} },
	"snapshot.storage.k8s.io/v1/VolumeSnapshotClass":  func() any { return &volumeSnapshotClass{} },
	"snapshot.storage.k8s.io/v1/VolumeSnapshot":       func() any { return &volumeSnapshot{} },
}

// object is one decoded document and where it came from.
type object struct {
	where string // file:document number
	kind  string // apiVersion/kind
	meta  metav1.Object
	value any
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeAll decodes every document of every .yaml file under the
// directory, strictly: unknown and duplicate fields are errors.
func decodeAll(t *testing.T) []object {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	}))
	require.NotEmpty(t, files)
	var out []object
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, doc := range docSeparator.Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			out = append(out, decodeDoc(t, f+":"+strconv.Itoa(i+1), []byte(doc)))
		}
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func decodeDoc(t *testing.T, where string, doc []byte) object {
	t.Helper()
	var tm metav1.TypeMeta
	require.NoError(t, yaml.Unmarshal(doc, &tm), where)
	kind := tm.APIVersion + "/" + tm.Kind
	mk, ok := kinds[kind]
	require.True(t, ok, "%s: unknown kind %q: add its Go type to kinds", where, kind)
	v := mk()
	require.NoError(t, strictDecode(doc, v), "%s (%s)", where, kind)
	meta, ok := v.(metav1.Object)
	require.True(t, ok, where)
	require.NotEmpty(t, meta.GetName(), "%s: metadata.name", where)
	require.Empty(t, validation.IsDNS1123Subdomain(meta.GetName()), "%s: name %q", where, meta.GetName())
	return object{where: where, kind: kind, meta: meta, value: v}
}

// strictDecode decodes a YAML document as the API server does, and
// stricter: field names match case-sensitively, and unknown or duplicate
// fields are errors.
func strictDecode(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

func find[T any](objs []object) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.value.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func one[T any](t *testing.T, objs []object) T {
	t.Helper()
	all := find[T](objs)
	require.Len(t, all, 1, "%T", *new(T))
	return all[0]
}

// TestManifestsDecodeStrictly: the decode itself (decodeAll fails on any
// unknown field), and the kinds a working installation needs.
func TestManifestsDecodeStrictly(t *testing.T) {
	objs := decodeAll(t)
	var got []string
	for _, o := range objs {
		got = append(got, o.kind)
	}
	for _, want := range []string{"storage.k8s.io/v1/CSIDriver", "apps/v1/Deployment", "apps/v1/DaemonSet", "v1/Secret",
		"storage.k8s.io/v1/StorageClass", "snapshot.storage.k8s.io/v1/VolumeSnapshotClass", "v1/ServiceAccount",
		"rbac.authorization.k8s.io/v1/ClusterRole", "rbac.authorization.k8s.io/v1/ClusterRoleBinding"} {
		require.Contains(t, got, want)
	}
}

// TestStrictDecodeCatchesTypos proves the check above would catch a typo.
func TestStrictDecodeCatchesTypos(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: x}\nspec: {attachRequried: true}\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: b, volumeMount: []}]\n",
		"apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: x}\ndriver: d\ndeletionPolicy: Delete\ndeletionpolicy: Retain\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: x}\nmetadata: {name: y}\n",
	} {
		var tm metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &tm))
		require.Error(t, strictDecode([]byte(doc), kinds[tm.APIVersion+"/"+tm.Kind]()), doc)
	}
}

// TestOneDriverName: the CSIDriver, the StorageClasses, the
// VolumeSnapshotClasses and the node plugin's kubelet paths name one driver.
func TestOneDriverName(t *testing.T) {
	objs := decodeAll(t)
	require.Equal(t, driverName, one[*storagev1.CSIDriver](t, objs).Name)
	d := one[*storagev1.CSIDriver](t, objs)
	require.True(t, *d.Spec.AttachRequired, "ControllerPublishVolume reserves the attachment")
	for _, sc := range find[*storagev1.StorageClass](objs) {
		require.Equal(t, driverName, sc.Provisioner, sc.Name)
		for k := range sc.Parameters {
			require.True(t, k == "type" || k == "availability" || strings.HasPrefix(k, "csi.storage.k8s.io/"),
				"StorageClass %s: parameter %q is not one brick knows (type, availability)", sc.Name, k)
		}
	}
	for _, vsc := range find[*volumeSnapshotClass](objs) {
		require.Equal(t, driverName, vsc.Driver, vsc.Name)
		require.Contains(t, []string{"Delete", "Retain"}, vsc.DeletionPolicy)
	}
	node := one[*appsv1.DaemonSet](t, objs)
	pluginDir := "/var/lib/kubelet/plugins/" + driverName
	require.Equal(t, pluginDir, hostPath(t, node.Spec.Template.Spec, "plugin-dir"))
	reg := container(t, node.Spec.Template.Spec, "node-driver-registrar")
	require.Equal(t, pluginDir+"/csi.sock", env(reg, "DRIVER_REG_SOCK_PATH"))
}

// TestSocketsMeet: every sidecar's --csi-address is the socket brick's
// --endpoint serves, in a volume both mount at the same place.
func TestSocketsMeet(t *testing.T) {
	objs := decodeAll(t)
	for _, spec := range podSpecs(objs) {
		b := container(t, spec.spec, "brick")
		endpoint := flag(b.Args, "--endpoint")
		require.True(t, strings.HasPrefix(endpoint, "unix:///"), "%s: brick --endpoint %q", spec.name, endpoint)
		sock := strings.TrimPrefix(endpoint, "unix://")
		dir := mountOf(t, b, filepath.Dir(sock))
		for _, c := range spec.spec.Containers {
			if c.Name == "brick" {
				continue
			}
			addr := flag(c.Args, "--csi-address")
			if addr == "$(ADDRESS)" {
				addr = env(c, "ADDRESS")
			}
			require.Equal(t, sock, addr, "%s/%s: --csi-address", spec.name, c.Name)
			require.Equal(t, dir, mountOf(t, c, filepath.Dir(sock)), "%s/%s: the socket's volume", spec.name, c.Name)
		}
	}
}

// TestReferencesResolve: every volume a container mounts is declared,
// every secret a pod uses and every service account exists, every binding
// names a role and an account that exist, every image is pinned.
func TestReferencesResolve(t *testing.T) {
	objs := decodeAll(t)
	accounts, secrets := map[string]bool{}, map[string]*corev1.Secret{}
	for _, sa := range find[*corev1.ServiceAccount](objs) {
		accounts[sa.Namespace+"/"+sa.Name] = true
	}
	for _, s := range find[*corev1.Secret](objs) {
		secrets[s.Namespace+"/"+s.Name] = s
	}
	for _, ps := range podSpecs(objs) {
		require.True(t, accounts[ps.namespace+"/"+ps.spec.ServiceAccountName], "%s: service account %q", ps.name, ps.spec.ServiceAccountName)
		vols := map[string]corev1.Volume{}
		for _, v := range ps.spec.Volumes {
			vols[v.Name] = v
			if v.Secret != nil {
				require.NotNil(t, secrets[ps.namespace+"/"+v.Secret.SecretName], "%s: secret %q", ps.name, v.Secret.SecretName)
			}
		}
		for _, c := range ps.spec.Containers {
			for _, m := range c.VolumeMounts {
				_, ok := vols[m.Name]
				require.True(t, ok, "%s/%s mounts undeclared volume %q", ps.name, c.Name, m.Name)
			}
			if c.Name != "brick" {
				require.Regexp(t, `^registry\.k8s\.io/sig-storage/[a-z-]+:v[0-9]+\.[0-9]+\.[0-9]+$`, c.Image, "%s/%s: a pinned sidecar", ps.name, c.Name)
			}
		}
	}
	roles := map[string]bool{}
	for _, r := range find[*rbacv1.ClusterRole](objs) {
		roles["ClusterRole/"+r.Name] = true
	}
	for _, r := range find[*rbacv1.Role](objs) {
		roles["Role/"+r.Namespace+"/"+r.Name] = true
	}
	check := func(where string, ref rbacv1.RoleRef, ns string, subjects []rbacv1.Subject) {
		key := "ClusterRole/" + ref.Name
		if ref.Kind == "Role" {
			key = "Role/" + ns + "/" + ref.Name
		}
		require.True(t, roles[key], "%s: role %s", where, key)
		for _, s := range subjects {
			require.True(t, accounts[s.Namespace+"/"+s.Name], "%s: subject %s/%s", where, s.Namespace, s.Name)
		}
	}
	for _, b := range find[*rbacv1.ClusterRoleBinding](objs) {
		check(b.Name, b.RoleRef, "", b.Subjects)
	}
	for _, b := range find[*rbacv1.RoleBinding](objs) {
		check(b.Name, b.RoleRef, b.Namespace, b.Subjects)
	}
}

// TestCloudsYAML: the Secret holds a clouds.yaml with the entry OS_CLOUD
// names, mounted where OS_CLIENT_CONFIG_FILE points.
func TestCloudsYAML(t *testing.T) {
	objs := decodeAll(t)
	s := one[*corev1.Secret](t, objs)
	var clouds struct {
		Clouds map[string]struct {
			AuthType string         `json:"auth_type"`
			Auth     map[string]any `json:"auth"`
		} `json:"clouds"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(s.StringData["clouds.yaml"]), &clouds))
	for _, ps := range podSpecs(objs) {
		b := container(t, ps.spec, "brick")
		entry, ok := clouds.Clouds[env(b, "OS_CLOUD")]
		require.True(t, ok, "%s: OS_CLOUD %q not in the secret's clouds.yaml", ps.name, env(b, "OS_CLOUD"))
		require.NotEmpty(t, entry.Auth["auth_url"])
		file := env(b, "OS_CLIENT_CONFIG_FILE")
		vol := mountOf(t, b, filepath.Dir(file))
		require.Equal(t, s.Name, volume(t, ps.spec, vol).Secret.SecretName, "%s: %s comes from the secret", ps.name, file)
	}
}

// TestNodePlugin: what attaching on the host needs (docs/csi.md, Deploy).
func TestNodePlugin(t *testing.T) {
	objs := decodeAll(t)
	spec := one[*appsv1.DaemonSet](t, objs).Spec.Template.Spec
	require.True(t, spec.HostNetwork, "iscsid's and multipathd's abstract sockets live in the host's network namespace")
	b := container(t, spec, "brick")
	require.Equal(t, "--mode=node", flagArg(b.Args, "--mode"))
	require.NotNil(t, b.SecurityContext)
	require.True(t, *b.SecurityContext.Privileged)
	for path, prop := range map[string]corev1.MountPropagationMode{
		"/var/lib/kubelet": corev1.MountPropagationBidirectional,
		"/dev":             "", "/sys": "", "/lib/modules": "", "/etc/iscsi": "", "/etc/nvme": "",
		"/etc/multipath": "", "/run": "", "/var/lib/brick": "", "/etc/machine-id": "",
	} {
		m := mount(t, b, path)
		require.Equal(t, path, hostPath(t, spec, m.Name), "%s comes from the host", path)
		if prop != "" {
			require.NotNil(t, m.MountPropagation, path)
			require.Equal(t, prop, *m.MountPropagation, path)
		}
	}
	ctrl := one[*appsv1.Deployment](t, objs).Spec.Template.Spec
	require.Equal(t, "--mode=controller", flagArg(container(t, ctrl, "brick").Args, "--mode"))
	for _, name := range []string{"csi-provisioner", "csi-attacher", "csi-resizer", "csi-snapshotter"} {
		container(t, ctrl, name)
	}
}

type podSpec struct {
	name, namespace string
	spec            corev1.PodSpec
}

// podSpecs are the pod templates that run brick.
func podSpecs(objs []object) []podSpec {
	var out []podSpec
	for _, d := range find[*appsv1.Deployment](objs) {
		out = append(out, podSpec{d.Name, d.Namespace, d.Spec.Template.Spec})
	}
	for _, d := range find[*appsv1.DaemonSet](objs) {
		out = append(out, podSpec{d.Name, d.Namespace, d.Spec.Template.Spec})
	}
	return out
}

func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	require.GreaterOrEqual(t, i, 0, "container %q", name)
	return spec.Containers[i]
}

func volume(t *testing.T, spec corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == name })
	require.GreaterOrEqual(t, i, 0, "volume %q", name)
	return spec.Volumes[i]
}

func hostPath(t *testing.T, spec corev1.PodSpec, name string) string {
	t.Helper()
	v := volume(t, spec, name)
	require.NotNil(t, v.HostPath, "volume %q is a hostPath", name)
	return v.HostPath.Path
}

func mount(t *testing.T, c corev1.Container, path string) corev1.VolumeMount {
	t.Helper()
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path })
	require.GreaterOrEqual(t, i, 0, "container %s mounts nothing at %s", c.Name, path)
	return c.VolumeMounts[i]
}

// mountOf is the volume container c mounts at path.
func mountOf(t *testing.T, c corev1.Container, path string) string {
	t.Helper()
	return mount(t, c, path).Name
}

func env(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// flag is the value of --name=value (or "--name value") in args.
func flag(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// flagArg is the whole --name=value argument, as the manifests write it.
func flagArg(args []string, name string) string {
	if v := flag(args, name); v != "" {
		return name + "=" + v
	}
	return ""
}
